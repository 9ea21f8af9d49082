//! A small, real MCP server over plain HTTP on 127.0.0.1, for the demo and the end-to-end
//! tests of the call path.
//!
//! It speaks the handshake era, the 2026-07-28 stateless era, or both on one endpoint, offers
//! a handful of demo tools plus tools that misbehave on purpose, and records what it received
//! ([`Stats`]) so tests can assert what reached the server.
//!
//! The server runs on its own thread with its own Tokio runtime, so it works from plain and
//! async tests alike; dropping the [`TestServer`] stops it.
//!
//! Tools ([`DEMO_TOOLS`] always, [`FAULT_TOOLS`] when [`ServerConfig::fault_tools`] is set):
//!
//! | tool | behaviour |
//! |---|---|
//! | `echo {text}` | text result |
//! | `progress {steps=3, delay_ms=10}` | `notifications/progress` 1..=steps (when the call has a progressToken), then "done" |
//! | `image` | a 1x1 PNG ([`IMAGE_PNG_BASE64`]) |
//! | `structured {a, b}` | `structuredContent {"sum"}` plus its JSON as text; has an outputSchema |
//! | `fail` | `isError: true` |
//! | `elicit` | handshake: `elicitation/create` on the stream, waits for the POSTed answer; 2026: `input_required` |
//! | `hang` | SSE stream with keep-alive comments, never a result |
//! | `drop_mid` | head and part of the body, then the connection is aborted |
//! | `huge {bytes}` | a text result of that many characters, generated as it is read |
//! | `audio`, `resource_link` | content types Brain does not support |
//! | `bad_structured` | structuredContent that breaks its outputSchema |
//! | `rpc_error` | JSON-RPC error -32603 |
//! | `ping_first` | server `ping` on the stream; answers after the client's response |
//! | `sampling`, `roots` | `sampling/createMessage` / `roots/list` on the stream, like `elicit` |
//! | `bad_progress` | progress 1, 1, 3, 2, 4 of 4, then "done" |
//! | `logging` | `notifications/message`, then "logged" |
//! | `slow {ms}` | answers after `ms` milliseconds |
//!
//! A client's closing of a result stream is recorded in [`Stats::abandoned_streams`].

mod body;
mod catalog;
mod config;
mod conn;
mod faults;
mod handshake;
mod headers;
mod hook;
mod router;
mod rpc;
mod sse;
mod state;
mod stateless;
mod stats;
mod tools;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

pub use config::{Era, Reply, ServerConfig};
pub use hook::{Hook, RawReply, Seen};
pub use stats::{Counters, Received, Stats};

use state::Shared;

/// The tools offered by every server (the rest are fault tools).
pub const DEMO_TOOLS: &[&str] = &catalog::DEMO_TOOLS;
/// The fault-injecting tools, offered when [`ServerConfig::fault_tools`] is set.
pub const FAULT_TOOLS: &[&str] = &catalog::FAULT_TOOLS;
/// The 1x1 PNG the `image` tool returns, base64-encoded.
pub const IMAGE_PNG_BASE64: &str = tools::PNG_BASE64;

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The port could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address tried.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// The runtime or its thread could not be created.
    #[error("cannot start the server runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// A running server; stops when dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server, panicking when it cannot (for tests; see [`TestServer::try_start`]).
    #[allow(clippy::expect_used)] // a test helper: a server that cannot start fails the test
    pub fn start(config: ServerConfig) -> Self {
        Self::try_start(config).expect("start the test MCP server")
    }

    /// Starts a server on 127.0.0.1 at `config.port` (0 = any free port).
    pub fn try_start(config: ServerConfig) -> Result<Self, StartError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
        let bind = |source| StartError::Bind { addr, source };
        let listener = TcpListener::bind(addr).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let addr = listener.local_addr().map_err(bind)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(StartError::Runtime)?;
        let shared = Arc::new(Shared::new(config));
        let (shutdown, stop) = oneshot::channel();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("mcp-test-server-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                        conn::serve(listener, thread_shared, stop).await;
                    }
                });
                // Dropping the runtime here cancels every connection task.
            })
            .map_err(StartError::Runtime)?;
        Ok(Self {
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp` (`https` when serving TLS).
    pub fn url(&self) -> String {
        let scheme = if self.shared.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{}", self.addr, router::PATH)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// A snapshot of what the server has seen so far.
    pub fn stats(&self) -> Stats {
        self.shared.stats.snapshot()
    }

    /// Running totals (connections accepted, open and their peak, requests), read without
    /// copying what [`TestServer::stats`] holds.
    pub fn counters(&self) -> Counters {
        self.shared.stats.counters()
    }

    /// Starts [`Counters::peak_open`] again from the connections open now.
    pub fn reset_peak_open(&self) {
        self.shared.stats.reset_peak_open();
    }

    /// Switches the era served from now on (connections and sessions stay), e.g. to test
    /// that a client notices a server that changed era under a cached verdict.
    pub fn set_era(&self, era: Era) {
        self.shared.set_era(era);
    }

    /// Waits (asynchronously, inside any Tokio runtime with time enabled) until `check`
    /// holds on the stats or `timeout` passes; returns the last snapshot and whether it held.
    /// Use it for effects a client produces off the caller's path (cancel, DELETE).
    pub async fn wait_for(
        &self,
        timeout: Duration,
        check: impl Fn(&Stats) -> bool,
    ) -> (Stats, bool) {
        let mut changes = self.shared.stats.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            changes.borrow_and_update();
            let stats = self.stats();
            if check(&stats) {
                return (stats, true);
            }
            if tokio::time::Instant::now() >= deadline {
                return (stats, false);
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                _ => {
                    let stats = self.stats();
                    let held = check(&stats);
                    return (stats, held);
                }
            }
        }
    }

    /// Blocking form of [`TestServer::wait_for`], for tests without a runtime. Do not call it
    /// on a runtime thread that the client under test needs.
    pub fn wait_until(&self, timeout: Duration, check: impl Fn(&Stats) -> bool) -> (Stats, bool) {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let stats = self.stats();
            if check(&stats) || std::time::Instant::now() >= deadline {
                let held = check(&stats);
                return (stats, held);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
