//! What the transport tells the operator: one `debug` event per exchange (target
//! `brain::exchange`, docs/observability.md), message bodies at `trace` (cut, the token
//! removed), and the connection and byte metrics.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use brain_mcp_proto::text::Secrets;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use tracing::Span;

/// Metric: connections the pool opened.
pub const CONNECTIONS_OPENED: &str = "brain_mcp_connections_opened_total";
/// Metric: bytes of reply bodies read.
pub const BYTES_RECEIVED: &str = "brain_mcp_bytes_received_total";
/// The `tracing` target of exchange events.
pub const EXCHANGE_TARGET: &str = "brain::exchange";
/// The most bytes of one body written at `trace`.
const TRACE_BODY: usize = 2048;
/// The most bytes of a reply's content type in an exchange event.
const SHOWN_CONTENT_TYPE: usize = 64;

/// Which pooled connection carried a response: added to every response's extensions by
/// the connector (on connections opened while exchange events are recorded), so an
/// exchange can say whether its connection was new or reused.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionUse {
    id: u64,
    served: Arc<AtomicU64>,
}

impl ConnectionUse {
    /// The connection numbered `id` (from 1, per client), not used yet.
    pub(crate) fn new(id: u64) -> Self {
        Self {
            id,
            served: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Counts one more response on this connection: whether an earlier one used it.
    fn reused(&self) -> bool {
        self.served.fetch_add(1, Ordering::Relaxed) > 0
    }
}

/// The facts of one HTTP exchange, gathered as it goes and written as one event when it
/// ends (or when it is dropped unfinished: `abandoned`).
#[derive(Debug)]
pub(crate) struct ExchangeLog {
    span: Span,
    http_method: &'static str,
    started: Instant,
    status: Option<u16>,
    /// The reply's content type as sent: shown (redacted, terminal-safe, bounded) only
    /// when the event is written.
    content_type: Option<HeaderValue>,
    connection: Option<u64>,
    reused: Option<bool>,
    bytes: u64,
    redirects: u32,
    resent: bool,
    done: bool,
    /// What to remove from everything a peer sent before it is logged.
    secrets: Secrets,
}

impl ExchangeLog {
    /// An exchange starting now, inside the current span (the caller's, say an MCP
    /// exchange span naming the method); `secrets` are every secret of the exchange,
    /// removed from what a peer sent before it is logged.
    pub(crate) fn start(http_method: &'static str, secrets: Secrets) -> Self {
        Self {
            span: Span::current(),
            http_method,
            started: Instant::now(),
            status: None,
            content_type: None,
            connection: None,
            reused: None,
            bytes: 0,
            redirects: 0,
            resent: false,
            done: false,
            secrets,
        }
    }

    /// The secrets removed from what this exchange logs and from its errors.
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// Notes a redirect followed.
    pub(crate) fn redirected(&mut self) {
        self.redirects += 1;
    }

    /// Notes a resend on a fresh connection after a stale pooled one.
    pub(crate) fn resent(&mut self) {
        self.resent = true;
    }

    /// Notes the final response's head: status, content type (the server's text: shown
    /// as every peer's text is, redacted, terminal-safe and bounded), connection.
    pub(crate) fn response<B>(&mut self, resp: &Response<B>) {
        self.status = Some(resp.status().as_u16());
        // Marked sensitive: it is the server's text, and `Debug` must not show it raw.
        self.content_type = resp.headers().get(CONTENT_TYPE).map(|v| {
            let mut v = v.clone();
            v.set_sensitive(true);
            v
        });
        if let Some(conn) = resp.extensions().get::<ConnectionUse>() {
            self.connection = Some(conn.id);
            self.reused = Some(conn.reused());
        }
    }

    /// The content type as the event shows it; only built when the event is enabled
    /// (tracing evaluates an event's fields only then).
    fn content_type_shown(&self) -> Option<String> {
        let value = self.content_type.as_ref()?;
        let text = String::from_utf8_lossy(value.as_bytes());
        Some(self.secrets.shown(&text, SHOWN_CONTENT_TYPE).into_owned())
    }

    /// Counts `n` bytes of body read.
    pub(crate) fn bytes(&mut self, n: usize) {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        self.bytes = self.bytes.saturating_add(n);
        metrics::counter!(BYTES_RECEIVED).increment(n);
    }

    /// Writes the exchange's event, once: `outcome` is `ok`, `accepted`, `abandoned` or
    /// what failed.
    pub(crate) fn end(&mut self, outcome: &str) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        tracing::debug!(
            target: EXCHANGE_TARGET,
            parent: &self.span,
            http_method = self.http_method,
            status = self.status,
            content_type = self.content_type_shown().as_deref(),
            bytes = self.bytes,
            duration_ms = millis,
            connection = self.connection,
            reused = self.reused,
            redirects = self.redirects,
            resent = self.resent,
            outcome,
            "exchange"
        );
    }

    /// Writes a message body at `trace`, as every peer's text is shown: every secret
    /// removed (in any spelling JSON allows), terminal-safe, cut.
    pub(crate) fn body(&self, direction: &'static str, text: &[u8]) {
        if !tracing::enabled!(target: EXCHANGE_TARGET, tracing::Level::TRACE) {
            return;
        }
        let text = String::from_utf8_lossy(text);
        tracing::trace!(
            target: EXCHANGE_TARGET,
            parent: &self.span,
            direction,
            body = %self.secrets.shown(&text, TRACE_BODY),
            "body"
        );
    }
}

impl Drop for ExchangeLog {
    fn drop(&mut self) {
        self.end("abandoned");
    }
}
