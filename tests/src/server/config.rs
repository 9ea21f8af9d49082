//! How a [`TestServer`](super::TestServer) behaves: era, reply framing and injected faults.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::hook::{Hook, RawReply, Seen};

/// Which MCP protocol era the server speaks.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum Era {
    /// 2025-11-25 and older: `initialize`, `Mcp-Session-Id`, `DELETE` to end a session.
    Handshake,
    /// 2026-07-28: no sessions; every request carries its version and capabilities.
    Stateless,
    /// Both on one endpoint, chosen per request (as the Python SDK does): `initialize`, or any
    /// request with `Mcp-Session-Id`, or one with neither a 2026 `MCP-Protocol-Version` header
    /// nor `_meta` protocolVersion, is handshake-era. `server/discover` then lists the
    /// handshake versions after 2026-07-28.
    #[default]
    Both,
}

/// How replies to requests are framed when a tool sends nothing before its result.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum Reply {
    /// `Content-Type: application/json`, one JSON-RPC response.
    #[default]
    Json,
    /// `Content-Type: text/event-stream` carrying the response as one event.
    Sse,
}

/// Configuration of a [`TestServer`](super::TestServer).
#[derive(Clone)]
pub struct ServerConfig {
    /// Protocol era(s) served.
    pub era: Era,
    /// Reply framing for requests that produce no intermediate messages. A call that sends
    /// progress, or a server request, is always answered with SSE.
    pub reply: Reply,
    /// Port to bind on 127.0.0.1; `0` picks a free one.
    pub port: u16,
    /// `tools/list` page size; `None` returns every tool on one page.
    pub page_size: Option<usize>,
    /// Whether the fault-injecting tools (`hang`, `drop_mid`, ...) are listed and callable.
    pub fault_tools: bool,
    /// Handshake era: every `initialize` is answered with HTTP 500.
    pub initialize_fails: bool,
    /// Handshake era: `initialize` is never answered (the request stays open).
    pub stall_initialize: bool,
    /// Handshake era: `initialize` opens its session at once and answers this much later.
    pub initialize_delay: Option<Duration>,
    /// Handshake era: a `DELETE` is recorded but never answered (slow cleanup).
    pub stall_delete: bool,
    /// Requests with this JSON-RPC method are recorded but never answered.
    pub stall_method: Option<&'static str>,
    /// Close a kept-alive connection once it has been idle (no request in flight) this long.
    pub close_idle_after: Option<Duration>,
    /// Handshake era: start every SSE stream with a priming event (an id and empty data).
    pub sse_priming: bool,
    /// When set, every request must carry `Authorization: Bearer <token>` or gets HTTP 401.
    /// Redacted in `Debug`.
    pub require_token: Option<String>,
    /// Sees every request first and may answer it with raw bytes (a hostile server).
    pub hook: Option<Hook>,
    /// Keep every request and session id in [`Stats`](super::Stats) (default). Off, only
    /// [`Counters`](super::Counters) are kept: for benchmarks making many thousands of calls.
    pub keep_requests: bool,
    /// Serve HTTPS with this configuration: HTTP/1.1, and h2 when its ALPN list offers
    /// `h2`. Idle connections are then never closed by the server
    /// ([`Self::close_idle_after`] applies to plain HTTP only).
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("era", &self.era)
            .field("reply", &self.reply)
            .field("port", &self.port)
            .field("page_size", &self.page_size)
            .field("fault_tools", &self.fault_tools)
            .field("initialize_fails", &self.initialize_fails)
            .field("stall_initialize", &self.stall_initialize)
            .field("initialize_delay", &self.initialize_delay)
            .field("stall_delete", &self.stall_delete)
            .field("stall_method", &self.stall_method)
            .field("close_idle_after", &self.close_idle_after)
            .field("sse_priming", &self.sse_priming)
            .field(
                "require_token",
                &self.require_token.as_ref().map(|_| "<redacted>"),
            )
            .field("hook", &self.hook)
            .field("keep_requests", &self.keep_requests)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            era: Era::Both,
            reply: Reply::Json,
            port: 0,
            page_size: None,
            fault_tools: true,
            initialize_fails: false,
            stall_initialize: false,
            initialize_delay: None,
            stall_delete: false,
            stall_method: None,
            close_idle_after: None,
            sse_priming: false,
            require_token: None,
            hook: None,
            keep_requests: true,
            tls: None,
        }
    }
}

impl ServerConfig {
    /// A default configuration serving `era`.
    pub fn new(era: Era) -> Self {
        Self {
            era,
            ..Self::default()
        }
    }

    /// Installs `hook`, which may answer any request itself (see [`Hook`]).
    #[must_use]
    pub fn hook(
        mut self,
        hook: impl Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync + 'static,
    ) -> Self {
        self.hook = Some(Hook::new(hook));
        self
    }

    /// Sets the reply framing.
    #[must_use]
    pub fn reply(mut self, reply: Reply) -> Self {
        self.reply = reply;
        self
    }
}
