//! `tools/call` result conversion in `brain-mcp-bind`: no result panics, and what converts
//! keeps the server's error flag, one Brain block per MCP block, images of `image/*` types
//! only, and the structured result exactly.
//!
//! Input layout: the result's JSON text (the `result` member of the response).

use brain_mcp_bind::fuzzing::convert_result;
use brain_mcp_proto::mcp::CallToolResponse;
use brain_tools_core::ContentBlock;
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
    // A `null` structured value counts as none; anything else is kept exactly.
    let expected = result.structured_content.filter(|v| v.get() != "null");
    assert_eq!(
        output.structured_content.as_ref().map(|s| s.as_str()),
        expected.as_deref().map(RawValue::get)
    );
    // One Brain block per MCP block: the text copy of a structured value is the
    // pipeline's to add, after the output limit.
    assert_eq!(output.content.len(), result.content.len(), "one block per block");
    for block in &output.content {
        if let ContentBlock::Image { mime_type, .. } = block {
            assert!(
                mime_type.to_ascii_lowercase().starts_with("image/"),
                "an image block of type {mime_type}"
            );
        }
    }
}
