//! Streamable HTTP and stdio transports for MCP clients.
//!
//! # Layer
//!
//! This crate moves bytes. It sends one encoded JSON-RPC message per HTTP `POST` (or
//! per stdio line) and hands back the text of every message the server sends in
//! reply; `brain-mcp-proto` encodes and decodes them and the binding layer above
//! decides what they mean. The transport only reads enough JSON-RPC to find the
//! response to the request it carries, so that a reply stream can end there.
//!
//! The HTTP side is [`HttpClient`]: one hyper-util pool with rustls (ring), HTTP/1.1
//! and h2 chosen by ALPN, plain `http` for local servers. [`HttpClient::post`] returns
//! [`PostReply::Accepted`] or a [`ReplyStream`] whose [`ReplyStream::next`] yields
//! [`Received`] messages, each decoded once, in order, ending at our response. HTTP proxies come from the
//! environment (curl's variables, loopback exempt) or [`ProxyConfig`]: `https` through a
//! `CONNECT` tunnel, `http` forwarded. The SSE decoder is public as
//! [`sse`]; the stdio child process transport is [`stdio`].
//!
//! # Delivery contract
//!
//! Every [`TransportError`] says, through [`TransportError::delivery`], what the caller
//! may assume:
//! - [`Delivery::NotSent`]: the request never left (DNS, TCP, TLS, an invalid header,
//!   a refused redirect before resending, hyper handing the request back unsent).
//!   Sending it again is safe.
//! - [`Delivery::MaybeSent`]: the server may have received and acted on it, but no
//!   definite answer arrived (broken connection, a stream ending early, a body over
//!   budget). Only requests without side effects may be repeated.
//! - [`Delivery::Answered`]: the server answered, with an error status or a reply the
//!   transport rejects; its questions ([`TransportError::is_status`],
//!   [`TransportError::is_unexpected_reply`], ...) say which.
//!
//! A request marked [`PostRequest::idempotent`] is resent once, on a fresh connection,
//! when a pooled connection turns out to have been closed by the server under it.
//! Nothing else is retried here.
//!
//! # Memory
//!
//! Each exchange has a byte budget ([`PostRequest::budget`]) that every body read
//! counts against, including error bodies and resumed streams, and SSE events are also
//! capped one by one. Going over fails at once with an error that answers
//! [`TransportError::is_body_too_large`] (and names the limit) and the
//! connection is dropped, not pooled.
//!
//! # Cancellation and drop safety
//!
//! The HTTP side spawns no task of its own (hyper's connection drivers end with their
//! connections); the stdio side has one stderr reader per child, aborted on drop. Dropping a [`HttpClient::post`] future or a [`ReplyStream`] stops the
//! exchange at once and closes its connection, which in the 2026 protocol era is how a
//! request is cancelled. A stream read to our response is drained (bounded in bytes
//! and time) so its connection returns to the pool. Callers set their deadlines by
//! wrapping calls in `tokio::time::timeout`. Dropping a [`stdio::StdioProcess`] kills
//! the child; [`stdio::StdioProcess::close`] ends it gracefully first.

#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]
mod body;
mod client;
mod coarse;
mod config;
mod error;
mod fetch;
mod headers;
mod media;
pub mod observe;
mod origin;
mod pool;
mod post;
mod proxy;
mod reach;
mod resolve;
mod rpc;
pub mod sse;
pub mod stdio;
mod stream;

pub use brain_mcp_proto::auth::reach::{AddrClass, Destinations};
pub use brain_mcp_proto::client::{Expect, Header};
pub use brain_mcp_proto::text::Secrets;
pub use client::{BACKGROUND_GRID, BuildError, HttpClient};
pub use coarse::{CoarseTimer, Timeout};
pub use config::ClientConfig;
pub use error::{Delivery, MESSAGE_LIMIT, TransportError};
pub use fetch::{FetchRequest, Fetched};
pub use headers::{BearerToken, DPOP, DPOP_NONCE};
pub use media::ContentType;
pub use pool::PoolStats;
pub use post::{Deleted, PostReply, PostRequest};
pub use proxy::{InvalidProxy, ProxyConfig};
pub use rpc::{ErrorCode, RequestId};
pub use stream::{Received, ReplyStream};
