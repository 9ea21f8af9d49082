//! Encoding single JSON-RPC messages as compact, newline-free JSON.

use serde::Serialize;
use serde_json::Value;

use super::{ErrorCode, RequestId};

/// A value handed to an encoder could not be serialised as JSON
/// (for example a map with non-string keys, or a failing `Serialize` impl).
#[derive(Debug, thiserror::Error)]
#[error("cannot encode the {part} of a JSON-RPC {kind}: {source}")]
#[non_exhaustive]
pub struct EncodeError {
    /// `request`, `notification` or `response`.
    pub kind: &'static str,
    /// The part that failed: `params` or `result`.
    pub part: &'static str,
    /// The serialiser's error.
    #[source]
    pub source: serde_json::Error,
}

fn push_json<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    kind: &'static str,
    part: &'static str,
) -> Result<(), EncodeError> {
    serde_json::to_writer(&mut *out, value).map_err(|source| EncodeError { kind, part, source })
}

/// Writes a string as a JSON string literal. Escaping a `str` into a `Vec`
/// cannot fail, so the impossible error arm writes an empty literal.
fn push_str(out: &mut Vec<u8>, s: &str) {
    if serde_json::to_writer(&mut *out, s).is_err() {
        out.extend_from_slice(b"\"\"");
    }
}

fn push_id(out: &mut Vec<u8>, id: &RequestId) {
    match id {
        RequestId::Number(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        RequestId::String(s) => push_str(out, s),
    }
}

/// Appends `,"params":<value>` unless the value serialises to `null`.
fn push_params<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    params: &T,
    kind: &'static str,
) -> Result<(), EncodeError> {
    let mark = out.len();
    out.extend_from_slice(b",\"params\":");
    let start = out.len();
    push_json(out, params, kind, "params")?;
    if &out[start..] == b"null" {
        out.truncate(mark);
    }
    Ok(())
}

/// Raw values passed through verbatim may contain line breaks between
/// tokens. Valid JSON never has a raw CR or LF inside a string, so removing
/// every one keeps the JSON equal and makes it safe for line framing.
fn finish(mut out: Vec<u8>) -> Vec<u8> {
    out.push(b'}');
    // One scan for both, many bytes a step.
    if memchr::memchr2(b'\n', b'\r', &out).is_some() {
        out.retain(|&b| b != b'\n' && b != b'\r');
    }
    out
}

/// Encodes a request. `params` that serialise to `null` (such as `()` or
/// `None`) leave the `params` member out.
pub fn encode_request<T: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &T,
) -> Result<Vec<u8>, EncodeError> {
    // Room for a typical request without regrowing (a tools/call with `_meta` is a few
    // hundred bytes).
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(REQUEST_HEAD);
    push_id(&mut out, id);
    out.extend_from_slice(b",\"method\":");
    push_str(&mut out, method);
    push_params(&mut out, params, "request")?;
    Ok(finish(out))
}

/// What every request starts with, up to its id.
const REQUEST_HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

/// What [`encode_request`] writes after the id of a request of `method` with `params`:
/// for a request sent again and again with new ids only (see [`encode_request_after_id`]).
pub(crate) fn request_after_id<T: Serialize + ?Sized>(
    method: &str,
    params: &T,
) -> Result<Box<[u8]>, EncodeError> {
    let whole = encode_request(&RequestId::Number(0), method, params)?;
    // `{"jsonrpc":"2.0","id":0` then the rest.
    Ok(whole
        .get(REQUEST_HEAD.len() + 1..)
        .unwrap_or_default()
        .into())
}

/// A request with id `id` and the method and params written once before by
/// [`request_after_id`]: the same bytes [`encode_request`] writes, without writing them
/// again.
pub(crate) fn encode_request_after_id(id: &RequestId, rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(REQUEST_HEAD.len() + 24 + rest.len());
    out.extend_from_slice(REQUEST_HEAD);
    push_id(&mut out, id);
    out.extend_from_slice(rest);
    out
}

/// Encodes a notification; `None` (or params serialising to `null`) leaves
/// the `params` member out.
pub fn encode_notification<T: Serialize + ?Sized>(
    method: &str,
    params: Option<&T>,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    push_str(&mut out, method);
    if let Some(params) = params {
        push_params(&mut out, params, "notification")?;
    }
    Ok(finish(out))
}

/// Encodes a notification that has no params. Infallible.
pub fn encode_bare_notification(method: &str) -> Vec<u8> {
    // Room for the method without regrowing (`notifications/initialized` is 54 bytes).
    let mut out = Vec::with_capacity(40 + method.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    push_str(&mut out, method);
    finish(out)
}

/// Encodes a successful response.
pub fn encode_response<T: Serialize + ?Sized>(
    id: &RequestId,
    result: &T,
) -> Result<Vec<u8>, EncodeError> {
    // Room for a typical request without regrowing (a tools/call with `_meta` is a few
    // hundred bytes).
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    push_id(&mut out, id);
    out.extend_from_slice(b",\"result\":");
    push_json(&mut out, result, "response", "result")?;
    Ok(finish(out))
}

/// Encodes an error response. With no id the `id` member is left out (the
/// MCP schema has no `null` id). Infallible: a `Value` always serialises.
pub fn encode_error(
    id: Option<&RequestId>,
    code: ErrorCode,
    message: &str,
    data: Option<&Value>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.extend_from_slice(b"\"id\":");
        push_id(&mut out, id);
        out.push(b',');
    }
    out.extend_from_slice(b"\"error\":{\"code\":");
    out.extend_from_slice(code.0.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    push_str(&mut out, message);
    if let Some(data) = data {
        let mark = out.len();
        out.extend_from_slice(b",\"data\":");
        if serde_json::to_writer(&mut out, data).is_err() {
            out.truncate(mark);
        }
    }
    out.push(b'}');
    finish(out)
}
