//! Keeping the bearer token out of everything a call or a discovery hands back.
//!
//! The transport already removes it from its own errors. This covers what the binding
//! builds from the server's words: failure messages, progress messages and the result
//! itself (text, structured content, even object keys), since a server may reflect the
//! `Authorization` header anywhere and the model must never see the key.

use brain_tools_core::{ContentBlock, ToolFailure, ToolOutput};
use serde_json::Value;

use crate::client::Target;

/// `failure` with the token removed from its message.
pub(crate) fn failure(target: &Target, mut failure: ToolFailure) -> ToolFailure {
    if let std::borrow::Cow::Owned(clean) = target.redact(&failure.message) {
        failure.message = clean;
    }
    failure
}

/// `output` with every secret removed from every string in it.
pub(crate) fn output(target: &Target, mut output: ToolOutput) -> ToolOutput {
    if target.secrets.is_empty() {
        return output;
    }
    for block in &mut output.content {
        match block {
            ContentBlock::Text { text } => scrub(target, text),
            ContentBlock::Image { mime_type, .. } => scrub(target, mime_type),
            _ => {}
        }
    }
    if let Some(value) = &mut output.structured_content {
        value_in_place(target, value);
    }
    output
}

/// Removes every secret from every string and key of `value`.
pub(crate) fn value_in_place(target: &Target, value: &mut Value) {
    target.secrets.redact_value(value);
}

fn scrub(target: &Target, text: &mut String) {
    if let std::borrow::Cow::Owned(clean) = target.redact(text) {
        *text = clean;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_mcp_transport::BearerToken;
    use serde_json::json;

    #[test]
    fn every_string_and_key_is_scrubbed() {
        let target =
            Target::new("http://h/mcp", Some(BearerToken::new("tok-123456"))).expect("url");
        let out = output(
            &target,
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
