//! Keeping every secret out of what a call hands back.
//!
//! The transport already removes secrets from its own errors, and the driver's failures
//! are made safe where they are written. This covers the result itself (text, structured
//! content, even object keys, an image's media type), since a server may reflect the
//! `Authorization` header anywhere and the model must never see the key.

use brain_mcp_transport::Secrets;
use brain_tools_core::{ContentBlock, JsonText, ToolOutput};

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
    // Kept as written (every digit) unless a secret had to come out; a value that is no
    // JSON once redacted as text is dropped.
    output.structured_content = output
        .structured_content
        .take()
        .and_then(|text| secrets.redact_json(text.as_raw()))
        .map(JsonText::from_raw);
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
                Some(json!({"tok-123456": ["x tok-123456", 1]}).into()),
                false,
            ),
        );
        let text = serde_json::to_string(&(out.content, out.structured_content)).expect("json");
        assert!(!text.to_lowercase().contains("tok-123456"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}
