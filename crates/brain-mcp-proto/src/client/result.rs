//! Reading a `tools/call` result: what kind of answer it is, and whether it keeps the
//! rules of the era it came in.

use serde_json::value::RawValue;

use crate::mcp::{CallToolResponse, CallToolResult};

use super::call_error::CallError;
use super::framing::Framing;
use super::violation::Violation;

/// Reads the result of a `tools/call`: a final result, or `None` when the server needs
/// input first (`input_required`, 2026 era). Any other kind of result, and one that cannot
/// be read, is a protocol error naming it. Every reader of a call's result uses this one.
pub fn read_result(raw: &RawValue) -> Result<Option<CallToolResult>, CallError> {
    match CallToolResponse::decode(raw) {
        Ok(CallToolResponse::Complete(result)) => Ok(Some(result)),
        Ok(CallToolResponse::InputRequired(_)) => Ok(None),
        Ok(CallToolResponse::Other { result_type, .. }) => Err(CallError::Protocol(
            Violation::UnsupportedResultType(result_type.to_string()),
        )),
        Err(e) => Err(CallError::Protocol(Violation::InvalidCallResult(
            e.to_string(),
        ))),
    }
}

/// A final result checked against the rules of the era it came in: a `null`
/// `structuredContent` says as much as none; the handshake-era revisions allow only an
/// object there, 2026-07-28 any JSON value.
pub fn check_result(
    mut result: CallToolResult,
    framing: &Framing,
) -> Result<CallToolResult, CallError> {
    let kind = result.structured_content.as_deref().map(json_kind);
    match kind {
        Some("null") => result.structured_content = None,
        Some("an object") | None => {}
        Some(_) if matches!(framing, Framing::Stateless(_)) => {}
        Some(other) => {
            return Err(CallError::Protocol(Violation::StructuredContent(
                other.to_owned(),
            )));
        }
    }
    Ok(result)
}

/// What kind of value `raw` (valid JSON) is, from its first byte.
fn json_kind(raw: &RawValue) -> &'static str {
    match raw.get().bytes().next() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}
