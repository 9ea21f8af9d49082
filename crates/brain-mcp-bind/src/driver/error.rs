//! The driver's one error: which step failed and why, and whether the message may have
//! reached the server. It becomes a Brain failure (kind, `unknown_outcome`, a safe
//! message) here, in one place; discovery and the host read the same error.

use brain_mcp_proto::client::{CallError, Outcome, RpcError};
use brain_mcp_proto::text::{FRAGMENT_LIMIT, Secrets, cut};
use brain_mcp_transport::{Delivery, MESSAGE_LIMIT, TransportError};
use brain_tools_core::{ErrorKind, ToolFailure};

use super::start::StartFailure;
use crate::auth::AuthFailure;
use crate::convert::ConvertError;
use crate::link::LinkError;
use crate::observe::Failure;

/// Which step of the work with a server failed: the core's stages.
pub(crate) use brain_mcp_proto::client::Stage as Step;

/// Why a step failed.
#[derive(Debug)]
pub(crate) enum Cause {
    /// The link failed; it says whether the message may have reached the server.
    Link(TransportError),
    /// No token could be had for the server (or it refused every one it was given):
    /// nothing was sent that the server acted on.
    Authorization(AuthFailure),
    /// The core's verdict on what the server answered.
    Core(CallError),
    /// The era probe got no definite answer in time (retried as the core allows): the
    /// last answer, and how many probes were sent.
    Unreachable {
        /// The last answer.
        last: NoEra,
        /// Probes sent.
        attempts: u32,
    },
    /// The way to the server is refused as configured (the probe's link failure: a
    /// redirect refused, a request that cannot be built, a proxy that refuses us).
    Refused(TransportError),
    /// A child could not be started, or its session opened.
    Start(StartFailure),
    /// The result holds content Brain does not carry, or malformed content.
    Content(ConvertError),
}

/// The last answer to an era probe that never got a definite one.
#[derive(Debug)]
pub(crate) enum NoEra {
    /// The server answered with this status (408, 429, 5xx).
    Status(u16),
    /// The link failed (no connection, no reply in time).
    Link(TransportError),
}

impl std::fmt::Display for NoEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status(status) => write!(f, "the server answered {status} to server/discover"),
            Self::Link(e) => e.fmt(f),
        }
    }
}

/// Whose fault a failure is. Every report (a call's failure kind, discovery's kind, the
/// host's kind) is derived from it, so one failure reads the same everywhere; with the
/// [`Delivery`] it says everything a caller acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blame {
    /// Nothing definite came back: no connection, no answer in time, a connection that
    /// broke, or a way there the configuration refuses (a redirect at the era probe, a
    /// proxy, a child that cannot start).
    Unreachable,
    /// The server refused our credentials (401 or 403), or no token could be had.
    Credentials,
    /// The server answered, with an error or not as the protocol says.
    Server,
}

/// A failed step.
#[derive(Debug)]
pub(crate) struct DriverError {
    pub(crate) step: Step,
    pub(crate) cause: Cause,
    /// The HTTP error status the core's verdict came with, for the message.
    pub(crate) status: Option<u16>,
}

impl DriverError {
    pub(crate) fn new(step: Step, cause: Cause) -> Self {
        Self {
            step,
            cause,
            status: None,
        }
    }

    /// The core's verdict on an error status the server answered with.
    pub(crate) fn answered(step: Step, error: CallError, status: u16) -> Self {
        Self {
            step,
            cause: Cause::Core(error),
            status: Some(status),
        }
    }

    /// A link failure at `step`, unless the server answered with an error status and the
    /// core, given the status, its JSON-RPC error and its challenge, decides what it
    /// means (`decide`: `Call::handle_status`, `Exchange::handle_status`). A request that
    /// could not be authorized is [`Cause::Authorization`].
    pub(crate) fn from_link(
        step: Step,
        e: impl Into<LinkError>,
        decide: impl FnOnce(u16, Option<RpcError>, Option<&str>) -> Option<CallError>,
    ) -> Self {
        let e = match e.into() {
            LinkError::Transport(e) => e,
            LinkError::Authorization(failure) => {
                return Self::new(step, Cause::Authorization(failure));
            }
        };
        if let Some(status) = e.status() {
            let status = status.as_u16();
            if let Some(decided) = decide(status, e.rpc_error().cloned(), e.www_authenticate()) {
                return Self::answered(step, decided, status);
            }
        }
        Self::new(step, Cause::Link(e))
    }

    /// Whether the step's message may have reached the server. A refusal of our
    /// credentials is an answer, but the server acted on nothing.
    pub(crate) fn delivery(&self) -> Delivery {
        match &self.cause {
            Cause::Link(e) => e.delivery(),
            Cause::Authorization(_) | Cause::Unreachable { .. } | Cause::Refused(_) => {
                Delivery::NotSent
            }
            Cause::Start(failure) if !failure.started() => Delivery::NotSent,
            Cause::Core(_) | Cause::Start(_) | Cause::Content(_) => Delivery::Answered,
        }
    }

    /// Whether the server could not be reached at all: no connection, TLS failure, or no
    /// answer to the era probe (what a circuit breaker counts).
    pub(crate) fn unreachable(&self) -> bool {
        match &self.cause {
            Cause::Unreachable { .. } => true,
            Cause::Link(e) => e.delivery() == Delivery::NotSent && (e.is_connect() || e.is_tls()),
            _ => false,
        }
    }

    /// What the failure says of the server, for its state in the core
    /// ([`brain_mcp_proto::client::ServerState::record`]): a stale era, a server that
    /// could not be reached, or one that answered.
    pub(crate) fn outcome(&self) -> Outcome {
        match &self.cause {
            Cause::Core(CallError::Rpc {
                forget_era: true, ..
            }) => Outcome::Stale,
            _ if self.unreachable() => Outcome::Unreachable,
            _ => Outcome::Answered,
        }
    }

    /// Whether the tool may have run: only once `tools/call` may have reached the server,
    /// and not when the server refused it before acting.
    fn may_have_run(&self) -> bool {
        self.step == Step::Task
            || (self.step == Step::Call
                && self.delivery() != Delivery::NotSent
                && !matches!(&self.cause, Cause::Core(e) if e.tool_did_not_run()))
    }

    /// The Brain failure: its kind, `unknown_outcome`, and a message with every secret of
    /// `secrets` removed from the server's words, which are cut to fit.
    pub(crate) fn to_failure(&self, secrets: &Secrets) -> ToolFailure {
        let message = self.message(secrets);
        let kind = self.kind();
        if self.may_have_run() {
            ToolFailure::after_send(kind, message)
        } else {
            ToolFailure::before_send(kind, message)
        }
    }

    /// Whose fault the failure is: the one sorting every report derives from.
    pub(crate) fn blame(&self) -> Blame {
        match &self.cause {
            Cause::Authorization(_) | Cause::Core(CallError::Unauthorized { .. }) => {
                Blame::Credentials
            }
            Cause::Unreachable { .. } | Cause::Refused(_) => Blame::Unreachable,
            Cause::Start(failure) if !failure.started() => Blame::Unreachable,
            Cause::Link(e) if e.is_body_too_large() => Blame::Server,
            Cause::Link(e) if no_answer(e) => Blame::Unreachable,
            // Nothing sent (a request that cannot be built, a refused destination);
            // a redirect the client will not follow is the server's answer.
            Cause::Link(e) if e.delivery() == Delivery::NotSent => Blame::Unreachable,
            Cause::Link(_) => Blame::Server,
            Cause::Core(_) | Cause::Start(_) | Cause::Content(_) => Blame::Server,
        }
    }

    /// The call's failure kind: the blame, told apart by step (before the call, a
    /// server's failure is the handshake's) and, for the server's failures at the call,
    /// by what it did.
    fn kind(&self) -> ErrorKind {
        let at_call = matches!(self.step, Step::Call | Step::Task);
        match self.blame() {
            Blame::Credentials => ErrorKind::AuthorizationFailed,
            // The call may have reached the server, and no answer came.
            Blame::Unreachable if at_call && self.delivery() == Delivery::MaybeSent => {
                ErrorKind::ConnectionLost
            }
            Blame::Unreachable => ErrorKind::ConnectFailed,
            Blame::Server if !at_call => ErrorKind::HandshakeFailed,
            Blame::Server => match &self.cause {
                Cause::Link(e) if e.is_body_too_large() => ErrorKind::OutputTooLarge,
                Cause::Core(CallError::Rpc { .. } | CallError::TaskRequired) => ErrorKind::RpcError,
                Cause::Core(CallError::SessionExpired) => ErrorKind::ConnectionLost,
                Cause::Core(CallError::NeedsInput(_)) => ErrorKind::UserInputRequired,
                Cause::Content(ConvertError::Unsupported { .. }) => ErrorKind::UnsupportedContent,
                _ => ErrorKind::ProtocolError,
            },
        }
    }

    /// What went wrong, in Brain's words, the server's own words made safe.
    pub(crate) fn message(&self, secrets: &Secrets) -> String {
        let safe = |text: &str| safe(secrets, text, MESSAGE_LIMIT);
        let call = self.step == Step::Call;
        match &self.cause {
            Cause::Link(e) => safe(&e.to_string()),
            Cause::Authorization(failure) => safe(&failure.to_string()),
            Cause::Core(CallError::Rpc { error, .. }) if self.step == Step::Handshake => {
                format!(
                    "the server refused the handshake: {}",
                    rpc_text(secrets, error, self.status)
                )
            }
            Cause::Core(CallError::Rpc { error, .. }) => {
                format!(
                    "the server answered with {}",
                    rpc_text(secrets, error, self.status)
                )
            }
            Cause::Core(CallError::Unauthorized { status, challenge }) => {
                let challenge = challenge
                    .as_deref()
                    .map(|c| format!("; WWW-Authenticate: {}", safe(c)))
                    .unwrap_or_default();
                let ran = if call {
                    ", so the tool did not run"
                } else {
                    ""
                };
                format!("the server refused the credentials{ran} ({status}{challenge})")
            }
            Cause::Core(CallError::SessionExpired) if call => {
                "the server ended the session during the call (404 with a session id)".into()
            }
            Cause::Core(CallError::SessionExpired) => {
                "the server ended the session before the call was sent".into()
            }
            Cause::Core(CallError::TaskRequired) => "the server runs this tool only as a task, \
                 and its binding does not say so (no task_support): run discovery (mcp-tools) \
                 for this server again to refresh the binding; the tool did not run"
                .into(),
            Cause::Core(e) => safe(&e.to_string()),
            Cause::Unreachable { last, attempts } => {
                safe(&format!("{last} (tried {attempts} time(s); not cached)"))
            }
            Cause::Refused(e) => safe(&e.to_string()),
            Cause::Start(StartFailure::NotStarted(why)) => safe(&why.to_string()),
            Cause::Start(StartFailure::Ended { during, stderr }) => format!(
                "the server ended during initialize: {}{}",
                during.message(secrets),
                safe(stderr)
            ),
            Cause::Start(StartFailure::Handshake(e)) => e.message(secrets),
            Cause::Start(StartFailure::Silent { stderr }) => format!(
                "the server did not answer initialize in time{}",
                safe(stderr)
            ),
            Cause::Content(e) => safe(&e.to_string()),
        }
    }

    /// How the step failed, as telemetry names it (`error.type`, docs/observability.md):
    /// the server's JSON-RPC error code, else the HTTP status it answered with, else
    /// Brain's error kind.
    pub(crate) fn failure(&self) -> Failure {
        match (&self.cause, self.status) {
            (Cause::Core(CallError::Rpc { error, .. }), _) => {
                Failure::rpc(error.code, &error.message)
            }
            (_, Some(status)) => Failure::status(status),
            (Cause::Link(e), None) => match (e.rpc_error(), e.status()) {
                (Some(rpc), _) => Failure::rpc(rpc.code, &rpc.message),
                (None, Some(status)) => Failure::status(status.as_u16()),
                (None, None) => Failure::of(self.kind().as_str()),
            },
            _ => Failure::of(self.kind().as_str()),
        }
    }

    /// The step, as messages name it (the core names the methods).
    pub(crate) fn step_name(&self) -> String {
        self.step.to_string()
    }
}

/// Whether the transport got no definite answer: no connection, no TLS, a connection
/// that broke, a stream that ended early, a deadline that passed.
fn no_answer(e: &TransportError) -> bool {
    e.is_connect() || e.is_tls() || e.is_io() || e.is_stream_ended() || e.is_timeout()
}

/// `error CODE: MESSAGE` (and `(data: DATA)` when the server sent data), each of the
/// server's strings redacted (data on its decoded strings, so escapes cannot hide a
/// secret) and cut to [`FRAGMENT_LIMIT`] bytes.
pub(crate) fn rpc_text(secrets: &Secrets, error: &RpcError, status: Option<u16>) -> String {
    let mut text = format!(
        "error {}: {}",
        error.code.0,
        safe(secrets, &error.message, FRAGMENT_LIMIT)
    );
    if let Some(status) = status {
        text.push_str(&format!(" (HTTP {status})"));
    }
    if let Some(data) = &error.data {
        let data = secrets
            .redact_json(data)
            .map_or_else(|| "(withheld)".to_owned(), |d| d.get().to_owned());
        text.push_str(&format!(
            " (data: {})",
            safe(secrets, &data, FRAGMENT_LIMIT)
        ));
    }
    text
}

/// `text` without the secrets, then cut to `max` bytes (in that order, so a cut never
/// leaves part of a secret).
pub(crate) fn safe(secrets: &Secrets, text: &str, max: usize) -> String {
    cut(&secrets.redact(text), max).into_owned()
}
