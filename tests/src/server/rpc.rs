//! JSON-RPC message helpers: classifying what arrived and building what goes out.

use http::{Response, StatusCode};
use serde_json::{Map, Value, json};

use super::body::Body;
use super::sse::json_response;

/// Parse error.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// Invalid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// Method not found.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid params.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// Implementation-defined server error (what the TypeScript SDK uses for transport errors).
pub(crate) const SERVER_ERROR: i64 = -32000;
/// Implementation-defined: session not found.
pub(crate) const SESSION_NOT_FOUND: i64 = -32001;
/// 2026-07-28: HTTP headers missing or not matching the body.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: protocol version not served.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

/// What a POSTed body turned out to be.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A request, with its id, method and params (`Null` when absent).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification.
    Notification,
    /// A response to a server request.
    Response,
    /// Anything else.
    Invalid,
}

/// Classifies one JSON-RPC message.
pub(crate) fn classify(v: &Value) -> Msg {
    let Some(obj) = v.as_object() else {
        return Msg::Invalid;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Msg::Invalid;
    }
    let id = obj.get("id").filter(|id| id.is_string() || id.is_number());
    match (obj.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => Msg::Request {
            id: id.clone(),
            method: method.to_owned(),
            params: obj.get("params").cloned().unwrap_or(Value::Null),
        },
        (Some(_), None) if !obj.contains_key("id") => Msg::Notification,
        (None, Some(_)) if obj.contains_key("result") || obj.contains_key("error") => Msg::Response,
        _ => Msg::Invalid,
    }
}

/// A success response.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response; `id` is `null` when unknown.
pub(crate) fn error(id: Option<&Value>, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), json!(code));
    err.insert("message".into(), json!(message));
    if let Some(data) = data {
        err.insert("data".into(), data);
    }
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": err})
}

/// An error response sent as JSON with an HTTP status.
pub(crate) fn error_response(
    status: StatusCode,
    id: Option<&Value>,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response<Body> {
    json_response(status, &error(id, code, message, data))
}

/// A bodiless response with `status`.
pub(crate) fn status(status: StatusCode) -> Response<Body> {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = status;
    resp
}

/// The HTTP status a 2026-era server gives a JSON-RPC error code (the Python SDK's mapping).
pub(crate) fn modern_status(code: i64) -> StatusCode {
    match code {
        PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH | -32021
        | UNSUPPORTED_VERSION => StatusCode::BAD_REQUEST,
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// `params._meta.progressToken`, when it is a string or an integer.
pub(crate) fn progress_token(params: &Value) -> Option<Value> {
    params
        .pointer("/_meta/progressToken")
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned()
}
