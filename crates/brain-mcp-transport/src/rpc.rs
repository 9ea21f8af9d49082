//! The few JSON-RPC facts the transport needs, read with `brain-mcp-proto`.
//!
//! The transport never interprets results; it only has to know which message of a
//! reply is the response to our request (so the stream can end there) and, for error
//! statuses, the JSON-RPC error code and message.

use brain_mcp_proto::client::RpcError;
pub use brain_mcp_proto::jsonrpc::{ErrorCode, RequestId};
use brain_mcp_proto::jsonrpc::{Incoming, Message, decode, decode_raw};
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

/// Splits a reply body or SSE data into messages, each with its text and role.
///
/// A batch array (allowed from 2025-03-26 servers) becomes its elements in order.
/// Lone UTF-16 surrogate escapes are repaired first (they become U+FFFD), so one cut
/// emoji does not make a whole message unreadable further up.
/// The text is taken by value: a single message (the usual reply) keeps it, uncopied.
pub(crate) fn split(text: String, ours: &RequestId) -> Result<Vec<(String, Role)>, String> {
    let text = match repair_lone_surrogates(&text) {
        Some(repaired) => repaired,
        None => text,
    };
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if trimmed.starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(trimmed).map_err(|e| e.to_string())?;
        if items.is_empty() {
            return Err("an empty JSON array".to_owned());
        }
        items
            .into_iter()
            .map(|raw| {
                let message = decode_raw(raw).map_err(|e| e.to_string())?;
                Ok((raw.get().to_owned(), role(&message, ours)))
            })
            .collect()
    } else {
        let role = match decode(text.as_bytes()).map_err(|e| e.to_string())? {
            Incoming::Single(m) => role(&m, ours),
            Incoming::Batch(_) => return Err("an unexpected batch".to_owned()),
        };
        Ok(vec![(text, role)])
    }
}

fn role(message: &Message<'_>, ours: &RequestId) -> Role {
    match message {
        Message::Request(_) | Message::Notification(_) => Role::FromServer,
        Message::Response(r) if &r.id == ours => Role::OurResponse,
        Message::Error(e) if e.id.is_none() || e.id.as_ref() == Some(ours) => Role::OurResponse,
        Message::Response(_) | Message::Error(_) => Role::OtherResponse,
    }
}

/// The JSON-RPC error in an error body, if any: read by the client core's one reader, the
/// same that reads an error in a `2xx` reply. Lone surrogates are repaired first.
pub(crate) fn error_of(body: &[u8]) -> Option<RpcError> {
    let text = std::str::from_utf8(body).ok()?;
    let repaired = repair_lone_surrogates(text);
    RpcError::from_body(repaired.as_deref().unwrap_or(text).as_bytes())
}
