//! The one JSON-RPC error type, whatever carried it.

use std::fmt;

use serde_json::value::RawValue;

use crate::jsonrpc::{self, ErrorCode, ErrorObject, Inbound, Incoming, Message};
use crate::mcp::UnsupportedProtocolVersionData;

/// A JSON-RPC error a server answered with: its code, message and `data`.
///
/// Read the same way from a final message in a `2xx` reply and from the body of an error
/// status (2026-era servers answer -32022 with HTTP 400), so no caller checks two shapes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RpcError {
    /// The error code.
    pub code: ErrorCode,
    /// The server's message, as sent.
    pub message: String,
    /// `data`, verbatim, when the server sent any (a `null` counts as none).
    pub data: Option<Box<RawValue>>,
}

impl RpcError {
    /// An error with no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// From a decoded error object.
    pub fn from_object(error: &ErrorObject<'_>) -> Self {
        Self {
            code: error.code,
            message: error.message.clone().into_owned(),
            data: error
                .data
                .filter(|d| d.get() != "null")
                .map(|d| d.to_owned()),
        }
    }

    /// The error of `message`, when it is an error response.
    pub fn of(message: &Inbound) -> Option<Self> {
        match message {
            Inbound::Error {
                code,
                message,
                data,
                ..
            } => Some(Self {
                code: *code,
                message: message.clone(),
                data: data.clone(),
            }),
            _ => None,
        }
    }

    /// The JSON-RPC error in a body: a single error response, or the first error in a
    /// batch. `None` when the body holds no error response.
    pub fn from_body(body: &[u8]) -> Option<Self> {
        match jsonrpc::decode(body).ok()? {
            Incoming::Single(Message::Error(e)) => Some(Self::from_object(&e.error)),
            Incoming::Batch(messages) => messages.into_iter().find_map(|m| match m {
                Message::Error(e) => Some(Self::from_object(&e.error)),
                _ => None,
            }),
            Incoming::Single(_) => None,
        }
    }

    /// `data` as text, when present.
    pub fn data_text(&self) -> Option<&str> {
        self.data.as_deref().map(RawValue::get)
    }

    /// The versions a -32022 (or a handshake server's "unsupported version") lists in
    /// `data.supported`; empty when there are none.
    pub fn supported_versions(&self) -> Vec<String> {
        self.data
            .as_deref()
            .and_then(|d| serde_json::from_str::<UnsupportedProtocolVersionData>(d.get()).ok())
            .map(|d| d.supported)
            .unwrap_or_default()
    }

    /// Whether this answer to a 2026-era request says the era the client used is stale:
    /// the version is not served (-32022) or the headers do not match (-32020). The client
    /// must forget what it cached about the server and probe again.
    pub fn says_era_is_stale(&self) -> bool {
        self.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            || self.code == ErrorCode::HEADER_MISMATCH
    }
}

impl PartialEq for RpcError {
    /// Equal when code, message and the text of `data` are.
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data_text() == other.data_text()
    }
}

impl Eq for RpcError {}

impl fmt::Display for RpcError {
    /// `error CODE: MESSAGE`, the server's words unchanged (bound and redact them before
    /// showing them to anyone).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {}: {}", self.code.0, self.message)
    }
}
