//! Keeping every secret out of what a call hands back.
//!
//! The transport already removes secrets from its own errors, and the driver's failures
//! are made safe where they are written. This covers the result itself (text, structured
//! content, even object keys, an image's media type), since a server may reflect the
//! `Authorization` header anywhere and the model must never see the key.

use brain_mcp_transport::Secrets;
use brain_tools_core::{ContentBlock, ToolOutput};

/// `output` with every secret removed from every string in it.
pub(crate) fn output(secrets: &Secrets, mut output: ToolOutput) -> ToolOutput {
    if secrets.is_empty() {
        return output;
    }
    for block in &mut output.content {
        match block {
            ContentBlock::Text { text } => scrub(secrets, text),
            ContentBlock::Image { mime_type, .. } => scrub(secrets, mime_type),
            _ => {}
        }
    }
    if let Some(value) = &mut output.structured_content {
        secrets.redact_value(value);
    }
    output
}

/// Removes every secret from `text`.
pub(crate) fn scrub(secrets: &Secrets, text: &mut String) {
    if let std::borrow::Cow::Owned(clean) = secrets.redact(text) {
        *text = clean;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_string_and_key_is_scrubbed() {
        let secrets = Secrets::new(["tok-123456"]);
        let out = output(
            &secrets,
            ToolOutput::new(
                vec![
                    ContentBlock::text("auth was Bearer tok-123456"),
                    ContentBlock::Image {
                        data: "aGk=".into(),
                        mime_type: "image/TOK-123456".into(),
                    },
                ],
                Some(json!({"tok-123456": ["x tok-123456", 1]})),
                false,
            ),
        );
        let text = serde_json::to_string(&(out.content, out.structured_content)).expect("json");
        assert!(!text.to_lowercase().contains("tok-123456"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}
