//! What changes when the link to a server is a child process's stdin and stdout instead
//! of HTTP.
//!
//! Everything else is the same as over HTTP: the same probe and verdicts, the same
//! handshake, the same [`Call`](super::Call) machine and [`listing`](super::listing) exchanges. A
//! stdio driver ignores [`Outgoing::headers`](super::Outgoing), the resume fields and
//! `idempotent` (there is no connection to resend on), and writes `body` as one line.
//! The rules below are the ones stdio needs on top:
//!
//! - **The probe's silent answers** ([`ProbeAnswer::Ended`](super::era::ProbeAnswer) and
//!   `Silent`): read by [`era::verdict`](super::era::verdict) like any other answer.
//! - **Cancelling.** A stdio child has no reply stream to close, so a call abandoned in
//!   either era is cancelled with `notifications/cancelled`
//!   ([`Call::cancel`](super::Call::cancel) for a [`Carrier`](super::Carrier) that is a
//!   process).
//! - **One line, one owner.** In the 2026 era one child serves many calls at once, so
//!   each line is routed ([`route`]) to the call it belongs to: a response by its id,
//!   progress by its token. A server request there belongs to no call: it is answered
//!   (`ping`) or refused, never handed to a call ([`unattributed`]).

use crate::jsonrpc::{ErrorCode, Inbound, RequestId};
use crate::mcp::methods;

use super::framing::Framing;
use super::outgoing::{Expect, Outgoing};
use super::policy::{self, Refusal};

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

/// Who `message`, one line the child wrote (decoded once), belongs to.
pub fn route(message: &Inbound) -> Route {
    match message {
        Inbound::Response { id, .. } => Route::Response(id.clone()),
        Inbound::Error { id, .. } => id.clone().map_or(Route::Orphan, Route::Response),
        Inbound::Request { .. } => Route::Request,
        Inbound::Notification { method, params } if method == methods::PROGRESS => params
            .as_ref()
            .and_then(|p| serde_json::from_str::<TokenOnly>(p.get()).ok())
            .map_or(Route::Other, |p| Route::Progress(p.progress_token)),
        Inbound::Notification { .. } => Route::Other,
    }
}

#[derive(serde::Deserialize)]
struct TokenOnly {
    #[serde(rename = "progressToken")]
    progress_token: RequestId,
}

/// The answer to a server request that belongs to no call (a shared 2026-era child, or a
/// child between calls): a `ping` is answered, anything else is refused with -32601, so
/// the server can unwind. `None` when `message` is not a request.
pub fn unattributed(framing: &Framing, message: &Inbound) -> Option<Outgoing> {
    let Inbound::Request { id, method, .. } = message else {
        return None;
    };
    if method == methods::PING {
        let body = crate::jsonrpc::encode_response(id, &serde_json::json!({})).ok()?;
        return Some(Outgoing::new("", body, Vec::new(), Expect::Accepted));
    }
    let refusal = Refusal::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("{method} is not supported here: the request belongs to no call of this client"),
    );
    Some(policy::refuse(framing, id, &refusal))
}
