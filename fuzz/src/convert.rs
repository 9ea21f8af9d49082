//! `tools/call` result conversion in `brain-mcp-bind`: no result panics, and what converts
//! keeps the server's error flag, one Brain block per MCP block, and the structured result
//! (as text too, unless a text block already carries it).
//!
//! Input layout: the result's JSON text (the `result` member of the response).

use brain_mcp_bind::fuzzing::convert_result;
use brain_mcp_proto::mcp::CallToolResponse;
use brain_tools_core::ContentBlock;
use serde_json::Value;
use serde_json::value::RawValue;

/// Checks the conversion's properties on one fuzz input.
pub fn check(data: &[u8]) {
    let Some(output) = convert_result(data) else {
        return;
    };
    let Ok(raw) = serde_json::from_slice::<&RawValue>(data) else {
        panic!("converted bytes that are not JSON");
    };
    let Ok(CallToolResponse::Complete(result)) = CallToolResponse::decode(raw) else {
        panic!("converted a result that is not a complete tools/call result");
    };
    assert_eq!(output.is_error, result.failed(), "the error flag");
    assert_eq!(output.structured_content, result.structured_content);
    let blocks = result.content.len();
    match &output.structured_content {
        None => assert_eq!(output.content.len(), blocks),
        Some(structured) => {
            assert!(
                (blocks..=blocks + 1).contains(&output.content.len()),
                "{} blocks from {blocks}",
                output.content.len()
            );
            let carried = output.content.iter().any(|block| match block {
                ContentBlock::Text { text } => {
                    serde_json::from_str::<Value>(text).is_ok_and(|v| &v == structured)
                }
                ContentBlock::Image { .. } => false,
            });
            assert!(carried, "no text block carries the structured result");
        }
    }
}
