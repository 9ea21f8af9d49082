//! What the MCP binding tells the operator (docs/observability.md): OpenTelemetry's MCP
//! client span for each request or notification and its durations
//! ([`OPERATION_DURATION`], [`SESSION_DURATION`]), a `mcp_exchange` span around each HTTP
//! message (the transport writes the exchange's event inside it), events for era
//! decisions and sessions (target `brain::mcp`), the call span's MCP fields, and the
//! session and breaker counters; authorization's target and counter ([`AUTH_TARGET`],
//! [`TOKEN_REQUESTS`]; the spans and events are written in `auth/seen.rs`).

mod operation;

use brain_mcp_proto::client::{Era, Outgoing};
use brain_mcp_proto::headers::MCP_SESSION_ID;
use brain_mcp_transport::Secrets;
use tracing::Span;

use crate::target::Target;

pub use crate::auth::{AUTH_TARGET, TOKEN_REQUESTS};
pub(crate) use operation::{Failure, Operation, PIPE, Peer, session_duration};
pub use operation::{OPERATION_DURATION, SESSION_DURATION};

/// Metric: handshake-era sessions opened.
pub const SESSIONS_OPENED: &str = "brain_mcp_sessions_opened_total";
/// Metric: circuit breaker changes, labelled `state`: `open`, `half_open` (a trial call
/// goes) or `closed`.
pub const BREAKER_CHANGES: &str = "brain_mcp_breaker_changes_total";
/// The `tracing` target of era and session events.
pub const MCP_TARGET: &str = "brain::mcp";

/// A note on a managed server's tools: one not offered, one bound under a name of our
/// making, more than the listing keeps (already made safe).
pub(crate) fn server_note(server: &str, note: &str) {
    tracing::warn!(target: MCP_TARGET, server, "{note}");
}

/// How much of a session id logs show.
const SHOWN_ID: usize = 8;

/// The first characters of a session id (the server chose it), enough to tell sessions
/// apart in a log; one that holds one of `secrets` is shown redacted, never cut.
pub(crate) fn short(secrets: &Secrets, id: &str) -> String {
    secrets.short_id(id, SHOWN_ID)
}

/// The span of one message sent: its JSON-RPC method (`DELETE` for the end of a session,
/// `response` for an answer to a server request) and the session it belongs to.
///
/// Here and below, a session id is shortened inside the span or event macro: tracing
/// evaluates a field only for a span or event someone records, and shortening scans the
/// id for secrets and copies it.
pub(crate) fn exchange_span(target: &Target, out: &Outgoing) -> Span {
    let method = if out.method.is_empty() {
        "response"
    } else {
        out.method
    };
    let session = || {
        let mut headers = out.headers.iter();
        let header = headers.find(|h| h.name.eq_ignore_ascii_case(MCP_SESSION_ID));
        header.map(|h| short(&target.secrets_now(), &h.value))
    };
    tracing::debug_span!(target: MCP_TARGET, "mcp_exchange", method, mcp.session.id = session())
}

/// The span of a session's `DELETE` (method `end session`).
pub(crate) fn delete_span(target: &Target, session: Option<&str>) -> Span {
    tracing::debug_span!(
        target: MCP_TARGET,
        "mcp_exchange",
        method = "end session",
        mcp.session.id = session.map(|id| short(&target.secrets_now(), id))
    )
}

/// Notes the era of the server at `origin` on the current call span and in an event.
pub(crate) fn era(origin: &str, era: Era, source: &'static str) {
    let era = era.describe();
    Span::current().record("era", era);
    tracing::debug!(target: MCP_TARGET, server = %origin, era, source, "era");
}

/// Notes a session the server opened.
pub(crate) fn session_opened(secrets: &Secrets, id: &str) {
    metrics::counter!(SESSIONS_OPENED).increment(1);
    let span = Span::current();
    if !span.is_disabled() {
        span.record("mcp.session.id", short(secrets, id).as_str());
    }
    tracing::event!(target: MCP_TARGET, tracing::Level::DEBUG, mcp.session.id = short(secrets, id), "session opened");
}

/// Notes how a session's `DELETE` went.
pub(crate) fn session_ended(target: &Target, id: Option<&str>, closed: bool, status: Option<u16>) {
    let id = || id.map(|id| short(&target.secrets_now(), id));
    if closed {
        tracing::debug!(target: MCP_TARGET, status, mcp.session.id = id(), "session closed");
    } else {
        tracing::warn!(target: MCP_TARGET, status, mcp.session.id = id(), "session DELETE failed; the server may keep it until its own timeout");
    }
}

/// Notes a `notifications/cancelled` sent for a request still in flight.
pub(crate) fn cancel_sent() {
    tracing::debug!(target: MCP_TARGET, "cancel sent for the request in flight");
}

/// Notes a `tasks/cancel` sent for a task still running when its call ended.
pub(crate) fn task_cancel_sent() {
    tracing::debug!(target: MCP_TARGET, "tasks/cancel sent for the task still running");
}

/// Notes on the current call span what the call reached: the remote tool and server.
pub(crate) fn call_target(origin: &str, tool: &str) {
    let span = Span::current();
    span.record("remote_tool", tool);
    span.record("server", origin);
}

/// Notes on the current call span how many exchanges the call made and the bytes of the
/// messages it received.
pub(crate) fn call_traffic(exchanges: u64, bytes_in: u64) {
    let span = Span::current();
    span.record("exchanges", exchanges);
    span.record("bytes_in", bytes_in);
}

/// Notes a change of a server's circuit breaker.
pub(crate) fn breaker(origin: &str, state: &'static str) {
    metrics::counter!(BREAKER_CHANGES, "state" => state).increment(1);
    if state == "open" {
        tracing::warn!(target: MCP_TARGET, server = %origin, state, "circuit breaker open: calls fail at once");
    } else {
        tracing::info!(target: MCP_TARGET, server = %origin, state, "circuit breaker");
    }
}
