//! Hostile answers on demand: a test installs a [`Hook`] that sees every request first and
//! may answer it with raw bytes of its choosing (any status, headers and body, valid JSON
//! or not), instead of the server's own answer.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};
use serde_json::Value;

use super::body::Body;

/// A request as a hook sees it.
#[derive(Debug)]
pub struct Seen<'a> {
    /// The HTTP method.
    pub http_method: &'a str,
    /// The request headers.
    pub headers: &'a HeaderMap,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: &'a Value,
}

impl Seen<'_> {
    /// The JSON-RPC method, when the body has one.
    pub fn method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }

    /// `params.name` of a `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        (self.method() == Some("tools/call"))
            .then(|| self.body.pointer("/params/name").and_then(Value::as_str))
            .flatten()
    }

    /// The JSON-RPC id as it would be written back (`null` when absent).
    pub fn id_json(&self) -> String {
        self.body
            .get("id")
            .map_or_else(|| "null".to_owned(), Value::to_string)
    }

    /// The bearer token the client sent, if any.
    pub fn bearer(&self) -> Option<&str> {
        self.headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
    }
}

/// A reply given verbatim.
#[derive(Clone, Debug)]
pub struct RawReply {
    /// The HTTP status.
    pub status: u16,
    /// Headers, added in order (values that are not valid header values are skipped).
    pub headers: Vec<(String, String)>,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

impl RawReply {
    /// A JSON body with `status`.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    /// A 200 event stream carrying `data` (one JSON-RPC message, no line breaks) as one event.
    pub fn sse(data: &str) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: format!("event: message\ndata: {data}\n\n").into_bytes(),
        }
    }

    /// A JSON-RPC result for request `id_json` whose `result` is `result_json` verbatim.
    pub fn result(id_json: &str, result_json: &str) -> Self {
        Self::json(
            200,
            format!(r#"{{"jsonrpc":"2.0","id":{id_json},"result":{result_json}}}"#),
        )
    }

    /// A JSON-RPC error for request `id_json` with `message` (escaped as a JSON string)
    /// and optional raw `data`, sent with `status`.
    pub fn rpc_error(
        status: u16,
        id_json: &str,
        code: i64,
        message: &str,
        data: Option<&str>,
    ) -> Self {
        let message = Value::String(message.to_owned()).to_string();
        let data = data.map(|d| format!(r#","data":{d}"#)).unwrap_or_default();
        Self::json(
            status,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id_json},"error":{{"code":{code},"message":{message}{data}}}}}"#
            ),
        )
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub(crate) fn into_response(self) -> Response<Body> {
        let mut resp = Response::new(Body::full(Bytes::from(self.body)));
        *resp.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        for (name, value) in &self.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(value.as_bytes()),
            ) {
                resp.headers_mut().append(name, value);
            }
        }
        resp
    }
}

/// What a hook runs for each request.
type HookFn = dyn Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync;

/// Sees every request before the server does; `Some` answers it instead.
#[derive(Clone)]
pub struct Hook(Arc<HookFn>);

impl Hook {
    /// A hook running `f`.
    pub fn new(f: impl Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Runs the hook on one request.
    pub(crate) fn answer(&self, seen: &Seen<'_>) -> Option<RawReply> {
        (self.0)(seen)
    }
}

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hook(..)")
    }
}
