//! The JSON-RPC 2.0 envelope as MCP uses it.
//!
//! [`decode`] turns bytes into borrowed [`Message`]s (a batch is accepted on
//! receive); the `encode_*` functions write exactly one compact message with
//! no line breaks, ready for stdio line framing or an HTTP body. Batches are
//! never encoded.

mod decode;
mod encode;
mod error;
mod error_code;
mod id;
mod inbound;
mod message;
#[cfg(test)]
mod tests;

pub use decode::{decode, decode_raw, raw_messages};
pub use encode::{
    EncodeError, encode_bare_notification, encode_error, encode_notification, encode_request,
    encode_response,
};
pub(crate) use encode::{encode_request_after_id, request_after_id};
pub use error::{DecodeError, DecodeErrorKind};
pub use error_code::ErrorCode;
pub use id::RequestId;
pub use inbound::Inbound;
pub use message::{ErrorObject, ErrorResponse, Incoming, Message, Notification, Request, Response};

/// The only `jsonrpc` version string MCP uses.
pub const VERSION: &str = "2.0";
