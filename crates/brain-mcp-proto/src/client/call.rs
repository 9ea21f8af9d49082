//! One `tools/call`, from the request to its outcome.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use crate::headers::{param_header_values, param_headers};
use crate::jsonrpc::{self, Incoming, Message, RequestId};
use crate::mcp::{CallToolResponse, CallToolResult, InputRequiredResult, methods, parse};
use crate::meta;

use super::framing::Framing;
use super::handshake;
use super::outgoing::{Expect, Identity, Outgoing};
use super::policy::{self, Reaction};
use super::rpc_error::RpcError;

pub use super::policy::Refusal;

/// What one call sends.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallRequest<'a> {
    /// The tool's name on the server.
    pub tool: &'a str,
    /// The arguments, sent as they are (borrowed: they can be large).
    pub arguments: &'a Map<String, Value>,
    /// `_meta.progressToken`: the server's progress notifications carry it.
    pub progress_token: RequestId,
    /// Other `_meta` keys (for Brain, `brain.dev/scope`).
    pub meta: Option<&'a Map<String, Value>>,
    /// More `_meta` keys with their values already written as JSON, after [`Self::meta`]'s
    /// (a caller that builds the same keys for every call saves a map). Keys must not
    /// repeat those of `meta`.
    pub raw_meta: &'a [(&'a str, Box<RawValue>)],
    /// The tool's input schema, whose `x-mcp-header` annotations name the arguments
    /// also sent as `Mcp-Param-*` headers in the 2026 era.
    pub input_schema: Option<&'a Value>,
}

impl<'a> CallRequest<'a> {
    /// A call of `tool` with `arguments`, progress reported under `progress_token`.
    pub fn new(
        tool: &'a str,
        arguments: &'a Map<String, Value>,
        progress_token: RequestId,
    ) -> Self {
        Self {
            tool,
            arguments,
            progress_token,
            meta: None,
            raw_meta: &[],
            input_schema: None,
        }
    }
}

/// One progress notification for the call, numbers exactly as the server wrote them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Work done so far.
    pub progress: Number,
    /// Total work, when known.
    pub total: Option<Number>,
    /// The server's note, as sent (bound it before showing it).
    pub message: Option<String>,
}

/// One request embedded in an `input_required` result (2026 era).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct InputRequest {
    /// The key its answer goes under in `inputResponses`.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// Its params, verbatim.
    pub params: Option<Box<RawValue>>,
}

/// Why a call ended without a result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error. `forget_era` is set when the answer says
    /// the 2026-era framing is stale (-32022, -32020): forget the cached era.
    Rpc {
        /// The error.
        error: RpcError,
        /// Whether the cached era must be forgotten.
        forget_era: bool,
    },
    /// The server asked for user input this client cannot give.
    NeedsInput(String),
    /// The server broke the protocol.
    Protocol(String),
    /// The session the call ran in is gone (a 404 to a request with a session id).
    SessionExpired,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rpc { error, .. } => write!(f, "the server answered with {error}"),
            Self::NeedsInput(m) | Self::Protocol(m) => f.write_str(m),
            Self::SessionExpired => f.write_str("the server ended the session during the call"),
        }
    }
}

/// What the driver must do next, in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Action {
    /// POST this message; it expects no reply. Best effort: losing it only makes the
    /// server wait for its own timeout.
    Send(Outgoing),
    /// Report progress.
    Progress(Progress),
    /// A request for user input (handshake era): answer it with [`Call::answer`].
    Ask {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its params, verbatim.
        params: Option<Box<RawValue>>,
    },
    /// The server needs input before it can finish (2026 era): answer every request,
    /// then send [`Call::retry`].
    InputRequired {
        /// What it asks.
        requests: Vec<InputRequest>,
        /// The state to echo.
        state: Option<String>,
    },
    /// The call is over: the result (raw, to convert) or why there is none.
    Finished(Result<CallToolResult, CallError>),
}

/// Reads the result of a `tools/call`: a final result, or `None` when the server needs
/// input first (`input_required`, 2026 era). Any other kind of result, and one that cannot
/// be read, is a protocol error naming it. Every reader of a call's result uses this one.
pub fn read_result(raw: &RawValue) -> Result<Option<CallToolResult>, CallError> {
    match CallToolResponse::decode(raw) {
        Ok(CallToolResponse::Complete(result)) => Ok(Some(result)),
        Ok(CallToolResponse::InputRequired(_)) => Ok(None),
        Ok(CallToolResponse::Other { result_type, .. }) => Err(CallError::Protocol(format!(
            "the server answered with resultType {result_type:?}, which this client does \
             not support"
        ))),
        Err(e) => Err(CallError::Protocol(format!(
            "invalid tools/call result: {e}"
        ))),
    }
}

/// The state of one call.
#[derive(Debug)]
pub struct Call {
    framing: Framing,
    id: RequestId,
    progress_token: RequestId,
    answers_input: bool,
    actions: VecDeque<Action>,
    finished: bool,
    rounds: u32,
}

/// The most `input_required` rounds one call may take before the server is taken to be
/// looping.
const MAX_ROUNDS: u32 = 8;

impl Call {
    /// Starts a call with request id `id`: the state and the `tools/call` to POST.
    pub fn start(
        framing: Framing,
        id: RequestId,
        request: &CallRequest<'_>,
        identity: &Identity,
    ) -> (Self, Outgoing) {
        let call = Self {
            framing,
            id: id.clone(),
            progress_token: request.progress_token.clone(),
            answers_input: identity.answers_input(),
            actions: VecDeque::new(),
            finished: false,
            rounds: 0,
        };
        let out = call.request(id, request, identity, None);
        (call, out)
    }

    /// The `tools/call` message; `round` carries the answers and state of an
    /// `input_required` round.
    fn request(
        &self,
        id: RequestId,
        request: &CallRequest<'_>,
        identity: &Identity,
        round: Option<(&Map<String, Value>, Option<&str>)>,
    ) -> Outgoing {
        let meta = MetaView {
            progress_token: &request.progress_token,
            stateless: match &self.framing {
                Framing::Stateless(version) => Some((version.as_str(), identity)),
                Framing::Handshake { .. } => None,
            },
            extra: request.meta,
            raw: request.raw_meta,
        };
        let params = CallParams {
            name: request.tool,
            arguments: request.arguments,
            meta: &meta,
            input_responses: round.map(|(answers, _)| answers),
            request_state: round.and_then(|(_, state)| state),
        };
        let body = jsonrpc::encode_request(&id, methods::TOOLS_CALL, &params).unwrap_or_default();
        let headers = match &self.framing {
            Framing::Stateless(_) => {
                let params = request
                    .input_schema
                    .and_then(|schema| param_headers(schema).ok())
                    .map(|found| param_header_values(&found, request.arguments))
                    .unwrap_or_default();
                self.framing
                    .headers(methods::TOOLS_CALL, Some(request.tool), params)
            }
            Framing::Handshake { .. } => {
                self.framing.headers(methods::TOOLS_CALL, None, Vec::new())
            }
        };
        let mut out = Outgoing::new(methods::TOOLS_CALL, body, headers, Expect::Response(id));
        out.resume_attempts = self.framing.resume_attempts();
        if out.resume_attempts > 0 {
            out.resume_headers = self.framing.base_headers();
        }
        out
    }

    /// The id of the request in flight.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The framing the call runs in.
    pub fn framing(&self) -> &Framing {
        &self.framing
    }

    /// Whether the call has its outcome.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Takes in a message of the reply that is not our response (progress, a server
    /// request, a log line).
    pub fn handle_message(&mut self, text: &str) {
        if self.finished {
            return;
        }
        match jsonrpc::decode(text.as_bytes()) {
            Ok(Incoming::Single(Message::Notification(n))) if n.method == methods::PROGRESS => {
                if let Some(progress) = n.params.and_then(|p| self.progress(p)) {
                    self.actions.push_back(Action::Progress(progress));
                }
            }
            Ok(Incoming::Single(Message::Request(r))) => {
                match policy::react(&self.framing, self.answers_input, &r.id, &r.method) {
                    Reaction::Answer(out) | Reaction::Refuse(out) => {
                        self.actions.push_back(Action::Send(out))
                    }
                    Reaction::Ask => self.actions.push_back(Action::Ask {
                        id: r.id,
                        method: r.method.into_owned(),
                        params: r.params.map(RawValue::to_owned),
                    }),
                    Reaction::NoInput(refusal, why) => {
                        if let Some(out) = refusal {
                            self.actions.push_back(Action::Send(out));
                        }
                        self.finish(Err(CallError::NeedsInput(why)));
                    }
                    Reaction::Forbidden(why) => self.finish(Err(CallError::Protocol(why))),
                }
            }
            // Log lines, other notifications, responses to other ids: not ours.
            _ => {}
        }
    }

    /// Takes in our response: a result, an error, or (2026 era) `input_required`.
    pub fn handle_response(&mut self, text: &str) {
        if self.finished {
            return;
        }
        match jsonrpc::decode(text.as_bytes()) {
            // Read once, here: a final result reaches the driver typed.
            Ok(Incoming::Single(Message::Response(r))) => match read_result(r.result) {
                Ok(Some(result)) => self.finish(Ok(result)),
                Ok(None) => self.input_required(r.result),
                Err(e) => self.finish(Err(e)),
            },
            Ok(Incoming::Single(Message::Error(e))) => {
                let error = RpcError::from_object(&e.error);
                self.finish(Err(self.rpc_error(error)));
            }
            Ok(_) => self.finish(Err(CallError::Protocol(
                "the response is not a JSON-RPC response".into(),
            ))),
            Err(e) => self.finish(Err(CallError::Protocol(format!("malformed response: {e}")))),
        }
    }

    /// Takes in an error status the request was answered with, and the JSON-RPC error its
    /// body held. Returns whether the core decided the outcome (otherwise the status is
    /// the driver's to report).
    pub fn handle_status(&mut self, status: u16, rpc: Option<RpcError>) -> bool {
        if self.finished {
            return true;
        }
        if handshake::expired(&self.framing, status) {
            self.finish(Err(CallError::SessionExpired));
            return true;
        }
        // A refusal of our credentials says nothing about the call: the driver's to report.
        if matches!(status, 401 | 403) {
            return false;
        }
        match rpc {
            Some(error) => {
                let error = self.rpc_error(error);
                self.finish(Err(error));
                true
            }
            None => false,
        }
    }

    fn rpc_error(&self, error: RpcError) -> CallError {
        let forget_era = matches!(self.framing, Framing::Stateless(_)) && error.says_era_is_stale();
        CallError::Rpc { error, forget_era }
    }

    /// The next thing to do, in order; `None` when there is nothing until more arrives.
    pub fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Our answer to a request handed out as [`Action::Ask`], to POST.
    pub fn answer(&self, id: &RequestId, answer: Result<Value, Refusal>) -> Outgoing {
        match answer {
            Ok(result) => match serde_json::value::to_raw_value(&result) {
                Ok(raw) => policy::respond(&self.framing, id, &raw),
                Err(e) => policy::refuse(
                    &self.framing,
                    id,
                    &Refusal::new(jsonrpc::ErrorCode::INTERNAL_ERROR, e.to_string()),
                ),
            },
            Err(refusal) => policy::refuse(&self.framing, id, &refusal),
        }
    }

    /// The next round of an `input_required` exchange: the same request under the new id
    /// `id`, carrying `answers` keyed as asked and the server's state echoed exactly.
    pub fn retry(
        &mut self,
        id: RequestId,
        request: &CallRequest<'_>,
        identity: &Identity,
        answers: &Map<String, Value>,
        state: Option<&str>,
    ) -> Outgoing {
        self.id = id.clone();
        self.request(id, request, identity, Some((answers, state)))
    }

    /// What to send when the caller stops waiting: `notifications/cancelled` in a
    /// handshake-era session; nothing in the 2026 era (closing the stream cancels), nor
    /// once the call is over.
    pub fn cancel(&self) -> Option<Outgoing> {
        handshake::abandoned(&self.framing, self.in_flight()?)
    }

    /// The id of the request while it is unanswered, so a driver can build the cancel
    /// ([`handshake::abandoned`]) only if it is needed: most calls are answered.
    pub fn in_flight(&self) -> Option<RequestId> {
        (!self.finished).then(|| self.id.clone())
    }

    fn finish(&mut self, outcome: Result<CallToolResult, CallError>) {
        self.finished = true;
        self.actions.push_back(Action::Finished(outcome));
    }

    fn input_required(&mut self, raw: &RawValue) {
        if !self.answers_input {
            self.finish(Err(CallError::NeedsInput(
                "the server answered input_required: it needs user input this client cannot give"
                    .into(),
            )));
            return;
        }
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            self.finish(Err(CallError::Protocol(format!(
                "the server asked for input {MAX_ROUNDS} times in one call; giving up"
            ))));
            return;
        }
        let Ok(result) = parse::<InputRequiredResult>(raw) else {
            self.finish(Err(CallError::Protocol(
                "invalid input_required result".into(),
            )));
            return;
        };
        let mut requests = Vec::new();
        for (key, request) in result.requests() {
            match request {
                Ok(r) => requests.push(InputRequest {
                    key,
                    method: r.method,
                    params: r.params,
                }),
                Err(e) => {
                    self.finish(Err(CallError::Protocol(format!(
                        "input request {key:?} is malformed: {e}"
                    ))));
                    return;
                }
            }
        }
        self.actions.push_back(Action::InputRequired {
            requests,
            state: result.request_state,
        });
    }

    /// A progress notification for our token, its numbers exactly as sent.
    fn progress(&self, params: &RawValue) -> Option<Progress> {
        let p: ProgressWire = serde_json::from_str(params.get()).ok()?;
        (p.progress_token == self.progress_token).then_some(Progress {
            progress: p.progress,
            total: p.total,
            message: p.message,
        })
    }
}

/// The members of a progress notification this client reads.
#[derive(Deserialize)]
struct ProgressWire {
    #[serde(rename = "progressToken")]
    progress_token: RequestId,
    progress: Number,
    #[serde(default)]
    total: Option<Number>,
    #[serde(default)]
    message: Option<String>,
}

/// `tools/call` params borrowing the call's arguments (they can be large; no copy).
#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    #[serde(rename = "_meta")]
    meta: &'a MetaView<'a>,
    #[serde(rename = "inputResponses", skip_serializing_if = "Option::is_none")]
    input_responses: Option<&'a Map<String, Value>>,
    #[serde(rename = "requestState", skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a str>,
}

/// A request's `_meta` written from its parts, borrowed: the progress token, in the 2026
/// era the version, capabilities and client info (the keys and order of
/// [`Framing::meta`]), then the caller's other keys, except those already written.
struct MetaView<'a> {
    progress_token: &'a RequestId,
    stateless: Option<(&'a str, &'a Identity)>,
    extra: Option<&'a Map<String, Value>>,
    raw: &'a [(&'a str, Box<RawValue>)],
}

impl MetaView<'_> {
    /// Whether `key` was written before the caller's keys.
    fn written(&self, key: &str) -> bool {
        key == meta::PROGRESS_TOKEN
            || (self.stateless.is_some()
                && matches!(
                    key,
                    meta::PROTOCOL_VERSION | meta::CLIENT_CAPABILITIES | meta::CLIENT_INFO
                ))
    }
}

impl Serialize for MetaView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(meta::PROGRESS_TOKEN, self.progress_token)?;
        if let Some((version, identity)) = self.stateless {
            map.serialize_entry(meta::PROTOCOL_VERSION, version)?;
            map.serialize_entry(meta::CLIENT_CAPABILITIES, identity.capabilities_json())?;
            map.serialize_entry(meta::CLIENT_INFO, identity.info_json())?;
        }
        for (key, value) in self.extra.into_iter().flatten() {
            if !self.written(key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in self.raw {
            if !self.written(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}
