//! The MCP client core: every protocol decision a client makes, with no IO.
//!
//! This module decides; it never sends, reads, sleeps or looks at a clock. A driver (the
//! call path, discovery and session cleanup in `brain-mcp-bind`, or any other) moves bytes
//! over a transport and feeds what came back in; the core answers with what to send next
//! and what the outcome is. Time only enters as durations the driver passes in. So every
//! rule below is tested here without a socket or a sleep.
//!
//! What lives here, once:
//!
//! - [`era`]: which era a server speaks, from its answer to a `server/discover` probe; which
//!   answers are transient (retried, never cached); when a cached era must be forgotten.
//! - [`Framing`]: how a request is framed in an era (session and version headers, the 2026
//!   `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers, `_meta`), and whether a broken reply
//!   stream may be resumed.
//! - [`handshake`]: `initialize`, version negotiation, `notifications/initialized`, closing a
//!   session, cancelling a request in it.
//! - [`Call`]: one `tools/call` from request to outcome: progress, server requests and the
//!   policy for them (pings answered, input requests refused or handed to a responder), the
//!   result or the JSON-RPC error, `input_required` rounds, cancellation.
//! - [`RpcError`]: the one JSON-RPC error type, read the same way from a 2xx reply and from
//!   an error status's body.
//! - [`listing`]: `tools/list` pages.
//! - [`ServerState`]: one server's life beside its calls: its era once known, where its
//!   exchanges run ([`Sessions`]), its [`health`] (the HTTP breaker and a child's restart
//!   backoff, one mechanism), and what each [`Outcome`] of an attempt does to them.
//! - [`stdio`]: the few rules that differ when the server is a child process (the probe's
//!   silent answers, cancelling, which call a line belongs to).
//!
//! The naming follows `quinn-proto`: `start`/constructors build the first request, `handle_*`
//! take what the server sent, `poll` hands out what the driver must do next, in order.

pub mod busy;
mod call;
mod call_error;
mod call_wire;
pub mod era;
mod framing;
pub mod handshake;
pub mod health;
pub mod listing;
mod outgoing;
mod policy;
mod progress;
mod result;
mod rpc_error;
mod server;
mod stage;
pub mod stdio;
pub mod task;
mod violation;

pub use call::{Action, Call, CallRequest, Carrier, Refusal};
pub use call_error::CallError;
pub use era::Era;
pub use framing::Framing;
pub use outgoing::{Expect, Header, Identity, Outgoing};
pub use policy::InputRequest;
pub use progress::Progress;
pub use result::{check_result, read_result};
pub use rpc_error::RpcError;
pub use server::{Effect, Outcome, ServerKind, ServerState, Sessions};
pub use stage::Stage;
pub use violation::{NeedsInput, Violation};

#[cfg(test)]
mod tests;
