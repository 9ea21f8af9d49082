//! OpenTelemetry's semantic conventions for MCP clients: one client span per request or
//! notification sent (named `{mcp.method.name} {gen_ai.tool.name}` for `tools/call`,
//! `{mcp.method.name}` otherwise), from the moment it is sent to its answer, over every
//! HTTP attempt it takes; the histograms `mcp.client.operation.duration` and
//! `mcp.client.session.duration`, in seconds. docs/observability.md maps every name.
//!
//! With no `tracing` subscriber interested, a span costs a callsite check and nothing is
//! formatted; labels are built only when an operation ends.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use brain_mcp_proto::client::{Expect, Framing, Outgoing};
use brain_mcp_proto::jsonrpc::ErrorCode;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, Secrets};
use metrics::Label;
use tracing::Span;
use tracing::field::{Empty, display};

use super::{MCP_TARGET, short};

/// Metric: how long each MCP request or notification took, from sending it to its answer
/// (OpenTelemetry's name), in seconds.
pub const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// Metric: how long each handshake-era session lasted, from `initialize` answered to its
/// end (OpenTelemetry's name), in seconds.
pub const SESSION_DURATION: &str = "mcp.client.session.duration";

/// The `error.type` of an operation that was dropped before its answer (the call timed
/// out or was cancelled).
const ABANDONED: &str = "abandoned";

/// Where a link's messages go, as OpenTelemetry names it: an HTTP server's host and port
/// (`network.transport` `tcp`, `network.protocol.name` `http`, `server.address`,
/// `server.port`), or a child's pipes (`network.transport` `pipe`).
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    /// The HTTP server's host and port; `None` for a child process.
    server: Option<(Arc<str>, u16)>,
}

/// A child process's pipes.
pub(crate) static PIPE: Peer = Peer { server: None };

impl Peer {
    /// An HTTP server at `host` and `port` (never the URL's path or query).
    pub(crate) fn http(host: Arc<str>, port: u16) -> Self {
        Self {
            server: Some((host, port)),
        }
    }

    fn transport(&self) -> &'static str {
        if self.server.is_some() { "tcp" } else { "pipe" }
    }

    fn protocol(&self) -> Option<&'static str> {
        self.server.as_ref().map(|_| "http")
    }

    fn labels(&self, labels: &mut Vec<Label>) {
        labels.push(Label::from_static_parts(
            "network.transport",
            self.transport(),
        ));
        if let Some((host, port)) = &self.server {
            labels.push(Label::from_static_parts("network.protocol.name", "http"));
            labels.push(Label::new("server.address", host.clone()));
            labels.push(Label::new("server.port", port.to_string()));
        }
    }
}

/// How an operation failed: OpenTelemetry's `error.type`, and the JSON-RPC error the
/// server answered with, if any.
#[derive(Debug)]
pub(crate) struct Failure {
    /// `error.type`: a JSON-RPC code's label, an HTTP status, `tool_error`, or Brain's
    /// error kind.
    pub(crate) kind: Cow<'static, str>,
    /// The server's JSON-RPC error: its code and message.
    pub(crate) rpc: Option<(ErrorCode, String)>,
}

impl Failure {
    /// A failure of `error.type` `kind`, with no JSON-RPC error.
    pub(crate) fn of(kind: impl Into<Cow<'static, str>>) -> Self {
        Self {
            kind: kind.into(),
            rpc: None,
        }
    }

    /// An HTTP error status: its number when the status is a registered one, `_OTHER`
    /// for any other (a server choosing statuses at will cannot grow a metric).
    pub(crate) fn status(status: u16) -> Self {
        let registered = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .is_some();
        Self::of(if registered {
            Cow::Owned(status.to_string())
        } else {
            Cow::Borrowed("_OTHER")
        })
    }

    /// The server's JSON-RPC error `code` with `message`: the `error.type` of the span is
    /// the code, that of the metric the code's bounded label.
    pub(crate) fn rpc(code: ErrorCode, message: &str) -> Self {
        Self {
            kind: Cow::Borrowed(code.label()),
            rpc: Some((code, message.to_owned())),
        }
    }
}

/// The span name: `tools/call echo`, or the method alone.
struct Name<'a>(&'static str, Option<&'a str>);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(tool) => write!(f, "{} {tool}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// One MCP request or notification in flight: its client span, and its duration recorded
/// when it ends (or, dropped unanswered, as `abandoned`).
#[derive(Debug)]
pub(crate) struct Operation<'a> {
    span: Span,
    started: Instant,
    method: &'static str,
    version: Option<&'static str>,
    tool: Option<&'a str>,
    peer: &'a Peer,
    ended: bool,
}

impl<'a> Operation<'a> {
    /// `out`, about to be sent to `peer` in `framing`; `tool` for a `tools/call`. The
    /// session id is shown as logs show it (the link's `secrets` removed, asked for only
    /// when the span is recorded).
    pub(crate) fn start(
        peer: &'a Peer,
        framing: &Framing,
        out: &Outgoing,
        tool: Option<&'a str>,
        secrets: impl FnOnce() -> Secrets,
    ) -> Self {
        let version = framing.protocol_version();
        let id = match &out.expect {
            Expect::Response(id) => Some(display(id)),
            _ => None,
        };
        let span = tracing::info_span!(
            target: MCP_TARGET,
            "mcp_operation",
            otel.name = %Name(out.method, tool),
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = out.method,
            mcp.protocol.version = version,
            mcp.session.id = Empty,
            jsonrpc.request.id = id,
            gen_ai.tool.name = tool,
            gen_ai.operation.name = tool.map(|_| "execute_tool"),
            network.transport = peer.transport(),
            network.protocol.name = peer.protocol(),
            server.address = peer.server.as_ref().map(|(host, _)| host.as_ref()),
            server.port = peer.server.as_ref().map(|(_, port)| *port),
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if !span.is_disabled()
            && let Some(session) = framing.session_id()
        {
            span.record("mcp.session.id", short(&secrets(), session));
        }
        Self {
            span,
            started: Instant::now(),
            method: out.method,
            version,
            tool,
            peer,
            ended: false,
        }
    }

    /// The span, to run the operation's work in.
    pub(crate) fn span(&self) -> Span {
        self.span.clone()
    }

    /// The operation got its answer: `failure` says how it failed, if it did; the server's
    /// words in it are shown with the link's `secrets` removed.
    pub(crate) fn end(mut self, failure: Option<Failure>, secrets: impl FnOnce() -> Secrets) {
        self.finish(failure.as_ref(), secrets);
    }

    /// Notes how the operation ended on its span and records its duration.
    fn finish(&mut self, failure: Option<&Failure>, secrets: impl FnOnce() -> Secrets) {
        self.ended = true;
        if let Some(failure) = failure {
            self.span.record("otel.status_code", "error");
            match &failure.rpc {
                Some((code, message)) => {
                    self.span.record("error.type", display(code.0));
                    self.span
                        .record("rpc.response.status_code", display(code.0));
                    if !self.span.is_disabled() {
                        let shown = secrets().shown(message, FRAGMENT_LIMIT);
                        self.span.record("otel.status_description", shown.as_ref());
                    }
                }
                None => {
                    self.span.record("error.type", failure.kind.as_ref());
                }
            }
        }
        let mut labels = Vec::with_capacity(10);
        labels.push(Label::from_static_parts("mcp.method.name", self.method));
        if let Some(version) = self.version {
            labels.push(Label::from_static_parts("mcp.protocol.version", version));
        }
        if let Some(tool) = self.tool {
            labels.push(Label::new("gen_ai.tool.name", tool.to_owned()));
            labels.push(Label::from_static_parts(
                "gen_ai.operation.name",
                "execute_tool",
            ));
        }
        self.peer.labels(&mut labels);
        if let Some(failure) = failure {
            labels.push(Label::new("error.type", failure.kind.clone()));
            if let Some((code, _)) = &failure.rpc {
                labels.push(Label::from_static_parts(
                    "rpc.response.status_code",
                    code.label(),
                ));
            }
        }
        metrics::histogram!(OPERATION_DURATION, labels)
            .record(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Operation<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.finish(Some(&Failure::of(ABANDONED)), Secrets::none);
        }
    }
}

/// Records a handshake-era session's duration: opened at `opened`, in `framing`, with
/// `peer`; `failed` holds the status of a `DELETE` that failed (`None` when it got no
/// answer), as `error.type`.
pub(crate) fn session_duration(
    peer: &Peer,
    framing: &Framing,
    opened: Instant,
    failed: Option<Option<u16>>,
) {
    let mut labels = Vec::with_capacity(6);
    if let Some(version) = framing.protocol_version() {
        labels.push(Label::from_static_parts("mcp.protocol.version", version));
    }
    peer.labels(&mut labels);
    if let Some(status) = failed {
        let kind = status.map_or(Cow::Borrowed("no_answer"), |s| Failure::status(s).kind);
        labels.push(Label::new("error.type", kind));
    }
    metrics::histogram!(SESSION_DURATION, labels).record(opened.elapsed().as_secs_f64());
}
