//! The MCP binding: tool discovery and the call path from a Brain session to an MCP server.
//!
//! - [`McpExecutor`] runs MCP bindings inside `brain-tools-core`'s pipeline, in either
//!   protocol era, one fresh session per call where the server needs sessions.
//! - [`discover`] reads a server's tools and turns the named ones into bindings
//!   (the `mcp-tools` command).
//! - [`McpClient`] is the state they share: the connection pool, each server's era, and
//!   the background tasks that close sessions.
//!
//! - [`ToolHost`] is the facade a Rust service embeds: the tools a tenant may use, for
//!   the model, and calls with live progress, cancellation and clean shutdown, over HTTP
//!   servers and managed stdio servers alike ([`host`]). See `examples/embed.rs` and
//!   `examples/managed_stdio.rs`.
//!
//! - [`RedactingWriter`] is the last guard the programs put on their own log output, for a
//!   service to put on its own: every secret the process knows removed from each line.
//!
//! The binaries `mcp-call` and `mcp-tools` are thin wrappers over the `cmd` module (the
//! default `cli` feature; a library user can leave it off).

#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]
mod auth;
#[doc(hidden)]
#[cfg(feature = "bench")]
pub mod benching;
mod bindings;
mod breaker;
mod client;
/// The two programs, for their binaries and the tests that drive them in process: not a
/// stable API (behind the default `cli` feature).
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cmd;
mod convert;
pub mod discover;
mod driver;
mod executor;
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod gate;
mod guard;
pub mod host;
mod limits;
mod link;
pub mod observe;
mod redact;
mod responder;
mod server;
mod servers;
mod stdio;
mod target;
mod text;

pub use auth::{
    AuthorizationHandler, AuthorizationPrompt, ClientProof, Credential, CredentialSource,
    DEFAULT_LEASE_TTL, DEFAULT_MAX_AUTHORIZER_BYTES, DEFAULT_MAX_AUTHORIZERS, Declined,
    IdentityAssertion, Lease, MemoryTokenStore, OAuthClient, StoreError, StoreErrorKind,
    StoredTokens, TokenKey, TokenStore, Version, Versioned, token_store_from_config,
};
#[cfg(feature = "postgres")]
pub use auth::{DEFAULT_DB_TIMEOUT, PostgresTokenStore};
pub use brain_mcp_proto::client::Era;
pub use client::{CLEANUP_STEP_DEADLINE, ClientStats, McpClient};
pub use discover::{DiscoverError, DiscoverErrorKind};
pub use executor::{ENVELOPE_ALLOWANCE, McpExecutor};
pub use guard::{DEFAULT_LINE_LIMIT, RedactingWriter};
pub use host::{CallHandle, HostError, HostErrorKind, ManagedServer, Reloaded, ToolHost, ToolSpec};
pub use responder::{Refusal, Responder, ServerRequest};

// What a caller of the facade needs, from the crates below, so one dependency does.
/// The attribute the traits an embedder implements are written with
/// ([`CredentialSource`], [`TokenStore`], [`AuthorizationHandler`], [`Responder`]):
/// put `#[brain_mcp_bind::async_trait]` on the `impl`, and no dependency of your own is
/// needed. (A plain `async fn` in the `impl` does not match the trait's boxed future.)
pub use async_trait::async_trait;
pub use brain_mcp_proto::text::{json_safe, terminal_safe};
pub use brain_mcp_proto::version::ProtocolVersion;
pub use brain_mcp_transport::{ClientConfig, Delivery, ProxyConfig};
pub use brain_tools_core::{
    Arguments, ContentBlock, ErrorKind, ExactNumber, HostConfig, JsonText, ProgressEvent, Secret,
    SecretVar, TaskSupport, ToolCall, ToolEvent, ToolResultEvent,
};
pub use tokio_util::sync::CancellationToken;
