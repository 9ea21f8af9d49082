//! `tools/list`, page by page, and the other requests without side effects whose answer
//! is a result (the handshake's `initialize`, the era probe).

use serde_json::value::RawValue;

use crate::jsonrpc::{self, Incoming, Message, RequestId};
use crate::mcp::{ListToolsParams, ListToolsResult, methods, parse};

use super::call::CallError;
use super::framing::Framing;
use super::outgoing::{Expect, Identity, Outgoing};
use super::policy::{self, Reaction};
use super::rpc_error::RpcError;

/// The request for one page of `tools/list` (`cursor` from the previous page).
pub fn request(
    framing: &Framing,
    id: RequestId,
    cursor: Option<String>,
    identity: &Identity,
) -> Outgoing {
    let meta = match framing {
        Framing::Stateless(_) => Some(framing.meta(identity)),
        Framing::Handshake { .. } => None,
    };
    let params = ListToolsParams {
        cursor,
        meta,
        ..ListToolsParams::default()
    };
    let body = jsonrpc::encode_request(&id, methods::TOOLS_LIST, &params).unwrap_or_default();
    let mut out = Outgoing::new(
        methods::TOOLS_LIST,
        body,
        framing.headers(methods::TOOLS_LIST, None, Vec::new()),
        Expect::Response(id),
    );
    out.idempotent = true;
    out.resume_attempts = framing.resume_attempts();
    out.resume_headers = framing.base_headers();
    out
}

/// What a request without side effects got back, message by message.
#[derive(Debug)]
#[non_exhaustive]
pub enum Step {
    /// Nothing to do; read on.
    Continue,
    /// Answer (or refuse) a server request, best effort, and read on.
    Send(Outgoing),
    /// The exchange is over.
    Done(Result<Box<RawValue>, CallError>),
}

/// Reads the reply to a request without side effects: server requests are answered as
/// in a call by a client that gives no input, and the final message is the outcome.
#[derive(Debug)]
pub struct Exchange {
    framing: Framing,
}

impl Exchange {
    /// An exchange in `framing`.
    pub fn new(framing: Framing) -> Self {
        Self { framing }
    }

    /// A message that is not our response.
    pub fn handle_message(&self, text: &str) -> Step {
        let Ok(Incoming::Single(Message::Request(r))) = jsonrpc::decode(text.as_bytes()) else {
            return Step::Continue;
        };
        match policy::react(&self.framing, false, &r.id, &r.method) {
            // Answered or refused; a refused input request lets the server unwind.
            Reaction::Answer(out) | Reaction::Refuse(out) | Reaction::NoInput(Some(out), _) => {
                Step::Send(out)
            }
            // The same rules as in a call: in the 2026 era a server request on a reply
            // stream ends the exchange at once instead of at the deadline.
            Reaction::NoInput(None, why) => Step::Done(Err(CallError::NeedsInput(why))),
            Reaction::Forbidden(why) => Step::Done(Err(CallError::Protocol(why))),
            // A client without input capabilities is never asked to hand a request on.
            Reaction::Ask => Step::Continue,
        }
    }

    /// Our response.
    pub fn handle_response(&self, text: &str) -> Result<Box<RawValue>, CallError> {
        match jsonrpc::decode(text.as_bytes()) {
            Ok(Incoming::Single(Message::Response(r))) => Ok(r.result.to_owned()),
            Ok(Incoming::Single(Message::Error(e))) => {
                Err(self.rpc(RpcError::from_object(&e.error)))
            }
            Ok(_) => Err(CallError::Protocol(
                "the response is not a JSON-RPC response".into(),
            )),
            Err(e) => Err(CallError::Protocol(format!("malformed response: {e}"))),
        }
    }

    /// An error status and the JSON-RPC error its body held: `Some` when the core decides
    /// the outcome (a JSON-RPC error, an expired session), `None` for the driver to report.
    pub fn handle_status(&self, status: u16, rpc: Option<RpcError>) -> Option<CallError> {
        if super::handshake::expired(&self.framing, status) {
            return Some(CallError::SessionExpired);
        }
        if matches!(status, 401 | 403) {
            return None;
        }
        rpc.map(|error| self.rpc(error))
    }

    fn rpc(&self, error: RpcError) -> CallError {
        let forget_era = matches!(self.framing, Framing::Stateless(_)) && error.says_era_is_stale();
        CallError::Rpc { error, forget_era }
    }
}

/// One page of tools from a `tools/list` result.
pub fn page(result: &RawValue) -> Result<ListToolsResult, CallError> {
    parse::<ListToolsResult>(result)
        .map_err(|e| CallError::Protocol(format!("the result is not a tool list: {e}")))
}
