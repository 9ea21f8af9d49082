//! Converting an MCP `tools/call` result into Brain's output.

use brain_mcp_proto::mcp::{CallToolResponse, ContentBlock as McpBlock};
use brain_tools_core::{ContentBlock, ToolOutput};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::exchange::StepError;

/// Why a result cannot be turned into Brain output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ConvertError {
    /// A content block Brain does not carry (audio, resource link, embedded resource, unknown).
    Unsupported(String),
    /// The result is malformed.
    Malformed(String),
}

/// Converts a `tools/call` result.
pub(crate) fn convert(raw: &RawValue) -> Result<ToolOutput, StepError> {
    let result = match CallToolResponse::decode(raw) {
        Ok(CallToolResponse::Complete(result)) => result,
        Ok(CallToolResponse::InputRequired(_)) => {
            return Err(StepError::UserInput(
                "the server answered input_required: it needs user input Brain cannot give".into(),
            ));
        }
        Ok(CallToolResponse::Other { result_type, .. }) => {
            return Err(StepError::Protocol(format!(
                "the server answered with resultType {result_type:?}, which Brain does not support"
            )));
        }
        Err(e) => {
            return Err(StepError::Protocol(format!(
                "invalid tools/call result: {e}"
            )));
        }
    };
    let mut content = Vec::with_capacity(result.content.len() + 1);
    for (index, block) in result.content.iter().enumerate() {
        content.push(block_of(index, block).map_err(|e| match e {
            ConvertError::Unsupported(m) => StepError::Unsupported(m),
            ConvertError::Malformed(m) => StepError::Protocol(m),
        })?);
    }
    if let Some(structured) = &result.structured_content {
        let already = content.iter().any(|block| match block {
            ContentBlock::Text { text } => {
                serde_json::from_str::<Value>(text).is_ok_and(|v| &v == structured)
            }
            ContentBlock::Image { .. } => false,
        });
        if !already {
            content.push(ContentBlock::text(structured.to_string()));
        }
    }
    Ok(ToolOutput {
        content,
        structured_content: result.structured_content.clone(),
        is_error: result.failed(),
    })
}

/// Converts one content block.
pub(crate) fn block_of(index: usize, block: &McpBlock) -> Result<ContentBlock, ConvertError> {
    match block {
        McpBlock::Text(t) => Ok(ContentBlock::text(t.text.clone())),
        McpBlock::Image(image) => {
            if image.decode_data().is_err() {
                return Err(ConvertError::Malformed(format!(
                    "content[{index}]: image data is not valid base64"
                )));
            }
            Ok(ContentBlock::Image {
                data: image.data.clone(),
                mime_type: image.mime_type.clone(),
            })
        }
        other => Err(ConvertError::Unsupported(format!(
            "content[{index}] has type {:?}; Brain carries only text, image and structured results",
            other.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(json: &str) -> Result<ToolOutput, StepError> {
        let raw = RawValue::from_string(json.to_owned()).expect("valid JSON");
        convert(&raw)
    }

    #[test]
    fn text_image_and_error_flag() {
        let out = output(
            r#"{"content":[{"type":"text","text":"hi"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"isError":true}"#,
        )
        .expect("converts");
        assert_eq!(
            out.content,
            vec![
                ContentBlock::text("hi"),
                ContentBlock::Image {
                    data: "aGk=".into(),
                    mime_type: "image/png".into()
                }
            ]
        );
        assert!(out.is_error);
    }

    #[test]
    fn structured_content_gets_one_text_block() {
        let out = output(r#"{"content":[],"structuredContent":{"sum":3}}"#).expect("converts");
        assert_eq!(out.content, vec![ContentBlock::text(r#"{"sum":3}"#)]);
        assert_eq!(out.structured_content, Some(serde_json::json!({"sum": 3})));
        // The server already sent the JSON as text (with other spacing): not duplicated.
        let out = output(
            r#"{"content":[{"type":"text","text":"{ \"sum\": 3 }"}],"structuredContent":{"sum":3}}"#,
        )
        .expect("converts");
        assert_eq!(out.content.len(), 1);
    }

    #[test]
    fn other_blocks_fail() {
        for block in [
            r#"{"type":"audio","data":"aGk=","mimeType":"audio/wav"}"#,
            r#"{"type":"resource_link","uri":"file:///x","name":"x"}"#,
            r#"{"type":"resource","resource":{"uri":"file:///x","text":"t"}}"#,
            r#"{"type":"hologram","beam":1}"#,
        ] {
            let err = output(&format!(r#"{{"content":[{block}]}}"#)).expect_err("unsupported");
            assert!(
                matches!(&err, StepError::Unsupported(m) if m.starts_with("content[0] has type")),
                "{err:?}"
            );
        }
    }

    #[test]
    fn bad_base64_and_input_required() {
        assert!(matches!(
            output(r#"{"content":[{"type":"image","data":"***","mimeType":"image/png"}]}"#),
            Err(StepError::Protocol(m)) if m.contains("not valid base64")
        ));
        assert!(matches!(
            output(r#"{"resultType":"input_required","inputRequests":{},"requestState":"s"}"#),
            Err(StepError::UserInput(_))
        ));
        assert!(matches!(
            output(r#"{"resultType":"task","task":{}}"#),
            Err(StepError::Protocol(m)) if m.contains("task")
        ));
    }
}
