//! The few JSON-RPC facts the transport needs, read with `brain-mcp-proto`.
//!
//! The transport never interprets results; it only has to know which message of a
//! reply is the response to our request (so the stream can end there) and, for error
//! statuses, the JSON-RPC error code and message.

use brain_mcp_proto::client::RpcError;
pub use brain_mcp_proto::jsonrpc::{ErrorCode, RequestId};
use brain_mcp_proto::jsonrpc::{Inbound, Incoming, Message, decode, decode_raw};
use brain_mcp_proto::text::repair_lone_surrogates;
use serde_json::value::RawValue;

/// How one message of a reply relates to our request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The response (or error response) to our request id, or an error response
    /// without an id (the server could not read our request; it is ours by position).
    OurResponse,
    /// A response or error to some other id.
    OtherResponse,
    /// A request or notification from the server.
    FromServer,
}

/// One message of a reply: decoded once, with its size in bytes and its role.
pub(crate) struct Piece {
    pub(crate) message: Inbound,
    pub(crate) bytes: usize,
    pub(crate) role: Role,
}

/// Why a body or an event is not JSON-RPC messages. `Display` is the reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotJsonRpc {
    /// Not JSON, or not a JSON-RPC message (the decoder's reason).
    #[error("{0}")]
    Json(String),
    /// `[]`.
    #[error("an empty JSON array")]
    EmptyBatch,
    /// A batch where the decoder expected one message.
    #[error("an unexpected batch")]
    UnexpectedBatch,
}

/// Decodes a reply body or SSE data into messages, once: each becomes an owned
/// [`Inbound`] the client core reads without decoding the envelope again.
///
/// A batch array (allowed from 2025-03-26 servers) becomes its elements in order.
/// Lone UTF-16 surrogate escapes are repaired first (they become U+FFFD), so one cut
/// emoji does not make a whole message unreadable further up.
pub(crate) fn split(text: &str, ours: &RequestId) -> Result<Vec<Piece>, NotJsonRpc> {
    let repaired = repair_lone_surrogates(text);
    let text = repaired.as_deref().unwrap_or(text);
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let piece = |message: &Message<'_>, bytes: usize| {
        let message = Inbound::from_message(message);
        let role = role(&message, ours);
        Piece {
            message,
            bytes,
            role,
        }
    };
    if trimmed.starts_with('[') {
        let items: Vec<&RawValue> =
            serde_json::from_str(trimmed).map_err(|e| NotJsonRpc::Json(e.to_string()))?;
        if items.is_empty() {
            return Err(NotJsonRpc::EmptyBatch);
        }
        items
            .into_iter()
            .map(|raw| {
                let message = decode_raw(raw).map_err(|e| NotJsonRpc::Json(e.to_string()))?;
                Ok(piece(&message, raw.get().len()))
            })
            .collect()
    } else {
        match decode(text.as_bytes()).map_err(|e| NotJsonRpc::Json(e.to_string()))? {
            Incoming::Single(m) => Ok(vec![piece(&m, text.len())]),
            Incoming::Batch(_) => Err(NotJsonRpc::UnexpectedBatch),
        }
    }
}

fn role(message: &Inbound, ours: &RequestId) -> Role {
    if message.answers(ours) {
        Role::OurResponse
    } else if message.method().is_some() {
        Role::FromServer
    } else {
        Role::OtherResponse
    }
}

/// The JSON-RPC error in an error body, if any: read by the client core's one reader, the
/// same that reads an error in a `2xx` reply. Lone surrogates are repaired first.
pub(crate) fn error_of(body: &[u8]) -> Option<RpcError> {
    let text = std::str::from_utf8(body).ok()?;
    let repaired = repair_lone_surrogates(text);
    RpcError::from_body(repaired.as_deref().unwrap_or(text).as_bytes())
}
