//! `tools/list`, page by page, and the other requests without side effects whose answer
//! is a result (the handshake's `initialize`, the era probe).

use serde_json::value::RawValue;

use crate::headers::{InvalidParamHeader, param_headers};
use crate::jsonrpc::{self, Inbound, RequestId};
use crate::mcp::{ListToolsParams, ListToolsResult, Tool, methods, parse};

use super::call_error::CallError;
use super::framing::Framing;
use super::outgoing::{Expect, Identity, Outgoing};
use super::policy::{self, Reaction};
use super::rpc_error::RpcError;
use super::violation::Violation;

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

    /// One message of the reply, decoded once by the link: our response ends the
    /// exchange; a server request is answered (or refused) as in a call by a client that
    /// gives no input; anything else is not ours.
    pub fn handle(&self, id: &RequestId, message: Inbound) -> Step {
        if message.answers(id) {
            return Step::Done(match message {
                Inbound::Response { result, .. } => Ok(result),
                other => Err(RpcError::of(&other).map_or_else(
                    || CallError::Protocol(Violation::NotAResponse),
                    |error| self.rpc(error),
                )),
            });
        }
        let Inbound::Request { id, method, .. } = message else {
            return Step::Continue;
        };
        match policy::react(&self.framing, false, &id, &method) {
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

    /// An error status, the JSON-RPC error its body held and its `WWW-Authenticate`
    /// challenge: `Some` when the core decides the outcome (a JSON-RPC error, an expired
    /// session, a refusal of our credentials), `None` for the driver to report.
    pub fn handle_status(
        &self,
        status: u16,
        rpc: Option<RpcError>,
        challenge: Option<&str>,
    ) -> Option<CallError> {
        if super::handshake::expired(&self.framing, status) {
            return Some(CallError::SessionExpired);
        }
        if matches!(status, 401 | 403) {
            return Some(CallError::Unauthorized {
                status,
                challenge: challenge.map(str::to_owned),
            });
        }
        rpc.map(|error| self.rpc(error))
    }

    fn rpc(&self, error: RpcError) -> CallError {
        let forget_era = matches!(self.framing, Framing::Stateless(_)) && error.says_era_is_stale();
        CallError::Rpc { error, forget_era }
    }
}

/// Whether a listed tool may be offered in `framing`'s era, and why not: in the 2026 era a
/// tool whose input schema has an invalid `x-mcp-header` annotation cannot be called (its
/// `Mcp-Param-*` headers could not be built), so it is not offered. A schema this build
/// cannot parse (a number past `f64`'s range) is left to the binding that would hold it,
/// which refuses it for that reason.
pub fn offered(framing: &Framing, tool: &Tool) -> Result<(), InvalidParamHeader> {
    if !matches!(framing, Framing::Stateless(_)) {
        return Ok(());
    }
    let Ok(schema) = tool.input_schema_value() else {
        return Ok(());
    };
    param_headers(&schema).map(|_| ())
}

/// One page of tools from a `tools/list` result.
pub fn page(result: &RawValue) -> Result<ListToolsResult, CallError> {
    parse::<ListToolsResult>(result)
        .map_err(|e| CallError::Protocol(Violation::InvalidToolList(e.to_string())))
}
