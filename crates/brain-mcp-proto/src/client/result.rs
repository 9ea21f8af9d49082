//! Reading a `tools/call` result: what kind of answer it is, and whether it keeps the
//! rules of the era it came in.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::mcp::{CallToolResponse, CallToolResult};

use super::call::CallError;
use super::framing::Framing;

/// Reads the result of a `tools/call`: a final result, or `None` when the server needs
/// input first (`input_required`, 2026 era). Any other kind of result, and one that cannot
/// be read, is a protocol error naming it. Every reader of a call's result uses this one.
pub fn read_result(raw: &RawValue) -> Result<Option<CallToolResult>, CallError> {
    match CallToolResponse::decode(raw) {
        Ok(CallToolResponse::Complete(result)) => Ok(Some(result)),
        Ok(CallToolResponse::InputRequired(_)) => Ok(None),
        Ok(CallToolResponse::Other { result_type, .. }) => Err(CallError::Protocol(format!(
            "the server answered with resultType {result_type:?}, which this client does \
             not support"
        ))),
        Err(e) => Err(CallError::Protocol(format!(
            "invalid tools/call result: {e}"
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
    match &result.structured_content {
        Some(Value::Null) => result.structured_content = None,
        Some(Value::Object(_)) | None => {}
        Some(_) if matches!(framing, Framing::Stateless(_)) => {}
        Some(other) => {
            return Err(CallError::Protocol(format!(
                "structuredContent is {}, not a JSON object as the handshake-era protocol requires",
                json_kind(other)
            )));
        }
    }
    Ok(result)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
