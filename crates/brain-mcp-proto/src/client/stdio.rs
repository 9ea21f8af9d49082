//! What changes when the link to a server is a child process's stdin and stdout instead
//! of HTTP.
//!
//! Everything else is the same as over HTTP: the same probe and verdicts, the same
//! handshake, the same [`Call`] machine and [`listing`](super::listing) exchanges. A
//! stdio driver ignores [`Outgoing::headers`](super::Outgoing), the resume fields and
//! `idempotent` (there is no connection to resend on), and writes `body` as one line.
//! The rules below are the ones stdio needs on top:
//!
//! - **The probe's silent answers.** A child that ends its output without answering
//!   `server/discover`, or stays silent for [`PROBE_PATIENCE`], is a handshake-era
//!   server: some refuse any first message other than `initialize` and quit, some ignore
//!   it. Neither is retried: a process is not a flaky network.
//! - **Cancelling.** A stdio child has no reply stream to close, so a call abandoned in
//!   either era is cancelled with `notifications/cancelled` ([`cancel`]).
//! - **One line, one owner.** In the 2026 era one child serves many calls at once, so
//!   each line is routed ([`route`]) to the call it belongs to: a response by its id,
//!   progress by its token. A server request there belongs to no call: it is answered
//!   (`ping`) or refused, never handed to a call ([`unattributed`]).

use std::time::Duration;

use crate::jsonrpc::{self, ErrorCode, Incoming, Message, RequestId};
use crate::mcp::{CancelledParams, methods};

use super::call::Call;
use super::era::{self, Era, ProbeAnswer, Verdict};
use super::framing::Framing;
use super::handshake;
use super::outgoing::{Expect, Outgoing};
use super::policy::{self, Refusal};

/// How long a stdio probe waits for the answer to `server/discover` (the child's start
/// included) before the silence counts as a handshake-era server.
pub const PROBE_PATIENCE: Duration = Duration::from_secs(10);

/// What came back for the probe over stdio.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum ProbeReply<'a> {
    /// Our response (a result or an error), as its text.
    Message(&'a str),
    /// The child closed its output (or exited) without answering.
    Ended,
    /// Nothing within [`PROBE_PATIENCE`].
    Silent,
}

/// The verdict on a stdio probe's answer. A message reads as over HTTP; the two silent
/// answers mean the handshake era (see the module docs).
pub fn verdict(answer: ProbeReply<'_>) -> Verdict {
    match answer {
        ProbeReply::Message(text) => era::verdict(ProbeAnswer::Message(text)),
        ProbeReply::Ended | ProbeReply::Silent => Verdict::Speaks(Era::Handshake),
    }
}

/// What to send when the caller stops waiting for `call` over stdio: a
/// `notifications/cancelled` for the request in flight, in either era; nothing once the
/// call has its outcome.
pub fn cancel(call: &Call) -> Option<Outgoing> {
    if call.is_finished() {
        return None;
    }
    let reason = "the caller stopped waiting (timeout or interruption)";
    match call.framing() {
        framing @ Framing::Handshake { .. } => {
            handshake::cancel(framing, call.request_id().clone(), reason)
        }
        Framing::Stateless(_) => {
            let params = CancelledParams {
                request_id: Some(call.request_id().clone()),
                reason: Some(reason.to_owned()),
                meta: None,
                extra: serde_json::Map::new(),
            };
            let body = jsonrpc::encode_notification(methods::CANCELLED, Some(&params)).ok()?;
            Some(Outgoing::new(
                methods::CANCELLED,
                body,
                Vec::new(),
                Expect::Accepted,
            ))
        }
    }
}

/// Who a line from a stdio child belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Route {
    /// The response (or error response) to our request with this id: the exchange's
    /// final message.
    Response(RequestId),
    /// An error response without a usable id: the server could not read one of our
    /// requests. Over a child that runs one exchange at a time it answers that exchange;
    /// over a shared child it belongs to no one.
    Orphan,
    /// A progress notification for this progress token.
    Progress(RequestId),
    /// A request from the server (a ping, an input request, ...).
    Request,
    /// Anything else: a log line, another notification, a batch. Not for any call.
    Other,
}

/// Who `text`, one line the child wrote, belongs to. Lines that do not decode are
/// [`Route::Other`] (the transport already skips non-JSON-RPC lines).
pub fn route(text: &str) -> Route {
    match jsonrpc::decode(text.as_bytes()) {
        Ok(Incoming::Single(Message::Response(r))) => Route::Response(r.id),
        Ok(Incoming::Single(Message::Error(e))) => e.id.map_or(Route::Orphan, Route::Response),
        Ok(Incoming::Single(Message::Request(_))) => Route::Request,
        Ok(Incoming::Single(Message::Notification(n))) if n.method == methods::PROGRESS => n
            .params
            .and_then(|p| serde_json::from_str::<TokenOnly>(p.get()).ok())
            .map_or(Route::Other, |p| Route::Progress(p.progress_token)),
        _ => Route::Other,
    }
}

#[derive(serde::Deserialize)]
struct TokenOnly {
    #[serde(rename = "progressToken")]
    progress_token: RequestId,
}

/// The answer to a server request that belongs to no call (a shared 2026-era child, or a
/// child between calls): a `ping` is answered, anything else is refused with -32601, so
/// the server can unwind. `None` when `text` is not a request or cannot be answered.
pub fn unattributed(framing: &Framing, text: &str) -> Option<Outgoing> {
    let Ok(Incoming::Single(Message::Request(r))) = jsonrpc::decode(text.as_bytes()) else {
        return None;
    };
    if r.method == methods::PING {
        let body = jsonrpc::encode_response(&r.id, &serde_json::json!({})).ok()?;
        return Some(Outgoing::new("", body, Vec::new(), Expect::Accepted));
    }
    let refusal = Refusal::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "{} is not supported here: the request belongs to no call of this client",
            r.method
        ),
    );
    Some(policy::refuse(framing, &r.id, &refusal))
}
