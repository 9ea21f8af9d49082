//! The JSON-RPC 2.0 and Model Context Protocol (MCP) message model used by
//! Brain, for both protocol eras: the handshake era (2025-03-26, 2025-06-18,
//! 2025-11-25, negotiated with `initialize`) and the stateless era
//! (2026-07-28, where every request carries its version and capabilities in
//! `_meta`).
//!
//! # Contract
//!
//! - **No IO.** This crate never opens sockets or files, spawns tasks or
//!   threads, reads the clock or the environment. Its normal dependencies are
//!   serde, serde_json, thiserror and base64 only; no runtime, HTTP or TLS
//!   crate may enter them (`cargo xtask ci` checks this).
//! - **Decoding never panics** on any input and returns typed errors that say
//!   what was wrong and where. The envelope decoder borrows from the input:
//!   params and results stay as [`RawValue`](serde_json::value::RawValue)
//!   slices until a caller asks for a typed value.
//! - **Nothing is lost.** MCP objects keep members this crate does not model
//!   and write them back; schemas and unknown content blocks are kept byte
//!   for byte.
//! - **Encoding** writes one compact message with no line breaks, ready for
//!   stdio line framing. Batches are accepted on receive, never produced.
//!
//! # Map
//!
//! - [`jsonrpc`]: ids, error codes, borrowed messages, [`jsonrpc::decode`], `encode_*`.
//! - [`mcp`]: typed params and results; [`mcp::methods`] names.
//! - [`version`]: known versions, their order, negotiation helpers.
//! - [`meta`]: `_meta` keys and the 2026 request `_meta` builder.
//! - [`headers`]: HTTP header names and the `x-mcp-header` rules.
//! - [`text`]: bounding, escaping, redacting and repairing text a peer sent.
//! - [`url`]: the one URL type (`http`/`https`), its two rules and reference resolution.
//! - [`client`]: the client core: every protocol decision of a client (era, handshake,
//!   what to do with each message of a call), with no IO.
//!
//! # Example
//!
//! ```
//! use brain_mcp_proto::jsonrpc::{self, Incoming, Message, RequestId};
//! use brain_mcp_proto::mcp::{self, CallToolResponse, ContentBlock};
//!
//! let line = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"4"}]}}"#;
//! let Ok(Incoming::Single(Message::Response(response))) = jsonrpc::decode(line) else {
//!     panic!("not a single response");
//! };
//! assert_eq!(response.id, RequestId::Number(3));
//! // The result stays raw until the caller, who knows the method, asks for a type.
//! match CallToolResponse::decode(response.result)? {
//!     CallToolResponse::Complete(result) => {
//!         assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "4"));
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//!
//! let request = jsonrpc::encode_request(&RequestId::Number(4), mcp::methods::PING, &())?;
//! assert_eq!(request, br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]

pub mod auth;
pub mod client;
#[doc(hidden)]
pub mod fuzzing;
pub mod headers;
pub mod jsonrpc;
pub mod mcp;
pub mod meta;
pub mod text;
pub mod url;
pub mod version;
mod wire;
