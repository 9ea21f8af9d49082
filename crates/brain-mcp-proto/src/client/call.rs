//! One `tools/call`, from the request to its outcome.

use std::collections::VecDeque;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::headers::{param_header_values_exact, param_headers};
use crate::jsonrpc::{self, Inbound, RequestId};
use crate::mcp::{CallToolResult, CancelledParams, InputRequiredResult, methods, parse};

use super::call_error::CallError;
use super::call_wire::{ArgumentsView, CallParams, MetaView, TaskParam};
use super::framing::Framing;
use super::handshake;
use super::outgoing::{Expect, Identity, Outgoing};
use super::policy::{self, InputRequest, Reaction, input_responses};
use super::progress::Progress;
use super::result::{check_result, read_result};
use super::rpc_error::RpcError;
use super::task::Task;
use super::violation::{NeedsInput, Violation};

pub use super::policy::Refusal;

/// What one call sends.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallRequest<'a> {
    /// The tool's name on the server.
    pub tool: &'a str,
    /// The arguments, sent as they are (borrowed: they can be large).
    pub arguments: &'a Map<String, Value>,
    /// The same arguments as the exact text to send, when the caller has it (the
    /// model's own text): the body holds it instead of `arguments` written anew, so
    /// numbers reach the server digit for digit. It must be the object `arguments` was
    /// parsed from (the `Mcp-Param-*` headers are read from both).
    pub arguments_text: Option<&'a RawValue>,
    /// The caller's id for the call (Brain's `call_id`): the progress token, unless the
    /// carrier needs one unique in the process (see [`Carrier::SharedProcess`]).
    pub call_id: &'a str,
    /// Other `_meta` keys (for Brain, `brain.dev/scope`).
    pub meta: Option<&'a Map<String, Value>>,
    /// More `_meta` keys with their values already written as JSON, after [`Self::meta`]'s
    /// (a caller that builds the same keys for every call saves a map). Keys must not
    /// repeat those of `meta`.
    pub raw_meta: &'a [(&'a str, Box<RawValue>)],
    /// The tool's input schema, whose `x-mcp-header` annotations name the arguments
    /// also sent as `Mcp-Param-*` headers in the 2026 era.
    pub input_schema: Option<&'a Value>,
    /// Ask the server to run the call as a task (2025-11-25 `params.task`), with this
    /// time to live in milliseconds when given: the answer may then be a
    /// [`Action::Task`]. Ignored in the 2026 era.
    pub task: Option<Option<u64>>,
}

impl<'a> CallRequest<'a> {
    /// A call of `tool` with `arguments`, known to the caller as `call_id`.
    pub fn new(tool: &'a str, arguments: &'a Map<String, Value>, call_id: &'a str) -> Self {
        Self {
            tool,
            arguments,
            arguments_text: None,
            call_id,
            meta: None,
            raw_meta: &[],
            input_schema: None,
            task: None,
        }
    }
}

/// What carries a call's messages. It decides how a call the caller stops waiting for is
/// cancelled, and which progress token the call uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Carrier {
    /// Streamable HTTP: each request has a reply stream of its own, closed to cancel it in
    /// the 2026 era.
    Http,
    /// A child process serving this call alone (a handshake-era session is a process).
    Process,
    /// A child process serving many calls at once (2026 era): lines are routed to calls
    /// by id and progress token, so the token must be unique in the process; callers may
    /// reuse a `call_id`, so the call's first request id serves.
    SharedProcess,
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
    /// The server runs the call as a task (it was asked to): poll it for the outcome.
    /// The call is over; the task goes on.
    Task(Box<Task>),
}

/// The state of one call.
#[derive(Debug)]
pub struct Call {
    framing: Framing,
    carrier: Carrier,
    id: RequestId,
    progress_token: RequestId,
    answers_input: bool,
    /// Whether the call asked for a task, so a task is an answer.
    asks_task: bool,
    actions: VecDeque<Action>,
    finished: bool,
    rounds: u32,
}

/// The most `input_required` rounds one call may take before the server is taken to be
/// looping.
const MAX_ROUNDS: u32 = 8;

impl Call {
    /// Starts a call with request id `id` over `carrier`: the state and the `tools/call`
    /// to send.
    pub fn start(
        framing: Framing,
        carrier: Carrier,
        id: RequestId,
        request: &CallRequest<'_>,
        identity: &Identity,
    ) -> (Self, Outgoing) {
        let progress_token = match carrier {
            Carrier::SharedProcess => id.clone(),
            Carrier::Http | Carrier::Process => RequestId::String(request.call_id.to_owned()),
        };
        let call = Self {
            framing: framing.clone(),
            carrier,
            id: id.clone(),
            progress_token,
            answers_input: identity.answers_input(),
            // In the 2026 era every call declares the tasks extension, so any may become one.
            asks_task: request.task.is_some() || matches!(framing, Framing::Stateless(_)),
            actions: VecDeque::new(),
            finished: false,
            rounds: 0,
        };
        let out = call.request(id, request, identity, None);
        (call, out)
    }

    /// A call whose outcome comes as the response to request `id`, already sent by the
    /// driver (a task's `tasks/result`, 2025-11-25): its reply is read as a call's is,
    /// server requests and progress under `progress_token` (the original call's, see
    /// [`Call::progress_token`]) included.
    pub fn awaiting(
        framing: Framing,
        carrier: Carrier,
        id: RequestId,
        progress_token: RequestId,
        identity: &Identity,
    ) -> Self {
        Self {
            framing,
            carrier,
            id,
            progress_token,
            answers_input: identity.answers_input(),
            asks_task: false,
            actions: VecDeque::new(),
            finished: false,
            rounds: 0,
        }
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
            progress_token: &self.progress_token,
            stateless: match &self.framing {
                Framing::Stateless(version) => Some((version.as_str(), identity)),
                Framing::Handshake { .. } => None,
            },
            extra: request.meta,
            raw: request.raw_meta,
        };
        let params = CallParams {
            name: request.tool,
            arguments: match request.arguments_text {
                Some(text) => ArgumentsView::Text(text),
                None => ArgumentsView::Map(request.arguments),
            },
            meta: &meta,
            input_responses: round.map(|(answers, _)| answers),
            task: (self.asks_task && matches!(self.framing, Framing::Handshake { .. })).then(
                || TaskParam {
                    ttl: request.task.flatten(),
                },
            ),
            request_state: round.and_then(|(_, state)| state),
        };
        let body = jsonrpc::encode_request(&id, methods::TOOLS_CALL, &params).unwrap_or_default();
        let headers = match &self.framing {
            Framing::Stateless(_) => {
                let params = request
                    .input_schema
                    .and_then(|schema| param_headers(schema).ok())
                    .map(|found| {
                        param_header_values_exact(&found, request.arguments, request.arguments_text)
                    })
                    .unwrap_or_default();
                self.framing
                    .headers(methods::TOOLS_CALL, Some(request.tool), params)
            }
            Framing::Handshake { .. } => {
                self.framing.headers(methods::TOOLS_CALL, None, Vec::new())
            }
        };
        let mut out = Outgoing::new(methods::TOOLS_CALL, body, headers, Expect::Response(id));
        out.progress_token = Some(self.progress_token.clone());
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

    /// Takes in one message of the reply, decoded once by the link: our response (a
    /// result, an error, or in the 2026 era `input_required`), progress, a server request,
    /// or something that is not ours (a log line, another id's response), ignored.
    pub fn handle(&mut self, message: Inbound) {
        if self.finished {
            return;
        }
        if message.answers(&self.id) {
            return self.response(message);
        }
        match message {
            Inbound::Notification { method, params } if method == methods::PROGRESS => {
                if let Some(progress) = params.and_then(|p| self.progress(&p)) {
                    self.actions.push_back(Action::Progress(progress));
                }
            }
            Inbound::Request { id, method, params } => {
                match policy::react(&self.framing, self.answers_input, &id, &method) {
                    Reaction::Answer(out) | Reaction::Refuse(out) => {
                        self.actions.push_back(Action::Send(out))
                    }
                    Reaction::Ask => self.actions.push_back(Action::Ask { id, method, params }),
                    Reaction::NoInput(refusal, why) => {
                        if let Some(out) = refusal {
                            self.actions.push_back(Action::Send(out));
                        }
                        self.finish(Err(CallError::NeedsInput(why)));
                    }
                    Reaction::Forbidden(why) => self.finish(Err(CallError::Protocol(why))),
                }
            }
            _ => {}
        }
    }

    fn response(&mut self, message: Inbound) {
        match message {
            // Asked for in a session (`params.task`): a task answer has no `resultType`.
            Inbound::Response { result, .. }
                if self.asks_task && matches!(self.framing, Framing::Handshake { .. }) =>
            {
                match Task::from_call_result(&result, &self.framing) {
                    Some(Ok(task)) => {
                        self.finished = true;
                        let task = task.answering(self.answers_input);
                        self.actions.push_back(Action::Task(Box::new(task)));
                    }
                    Some(Err(e)) => self.finish(Err(e)),
                    None => self.respond_with(&result),
                }
            }
            Inbound::Response { result, .. } => self.respond_with(&result),
            Inbound::Error {
                code,
                message,
                data,
                ..
            } => {
                let error = RpcError {
                    code,
                    message,
                    data,
                };
                self.finish(Err(self.rpc_error(error)));
            }
            _ => {}
        }
    }

    /// A result for our request: read once, here, so a final result reaches the driver
    /// typed and checked.
    fn respond_with(&mut self, result: &RawValue) {
        match read_result(result) {
            // A task the call did not ask for (2025-11-25: `{"task": …}` and no content) is
            // no result: the server broke the protocol.
            Ok(Some(found)) if found.content.is_empty() && found.extra.contains_key("task") => {
                self.finish(Err(CallError::Protocol(Violation::UnaskedTask)));
            }
            Ok(Some(found)) => {
                let checked = check_result(found, &self.framing);
                self.finish(checked);
            }
            Ok(None) => self.input_required(result),
            // A 2026 task (`resultType: "task"`) is no result this reader knows; looked
            // for only then, so a direct result is read once.
            Err(e) => match self
                .asks_task
                .then(|| Task::from_call_result(result, &self.framing))
                .flatten()
            {
                Some(Ok(task)) => {
                    self.finished = true;
                    let task = task.answering(self.answers_input);
                    self.actions.push_back(Action::Task(Box::new(task)));
                }
                Some(Err(task_error)) => self.finish(Err(task_error)),
                None => self.finish(Err(e)),
            },
        }
    }

    /// Takes in an error status the request was answered with, the JSON-RPC error its
    /// body held and its `WWW-Authenticate` challenge. Returns whether the core decided
    /// the outcome (otherwise the status is the driver's to report).
    pub fn handle_status(
        &mut self,
        status: u16,
        rpc: Option<RpcError>,
        challenge: Option<&str>,
    ) -> bool {
        if self.finished {
            return true;
        }
        if handshake::expired(&self.framing, status) {
            self.finish(Err(CallError::SessionExpired));
            return true;
        }
        // A refusal of our credentials comes before the server looks at the call.
        if matches!(status, 401 | 403) {
            self.finish(Err(CallError::Unauthorized {
                status,
                challenge: challenge.map(str::to_owned),
            }));
            return true;
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
    /// `id`, carrying each answer under the key it was asked with (a refusal as an
    /// `error` object) and the server's state echoed exactly.
    pub fn retry(
        &mut self,
        id: RequestId,
        request: &CallRequest<'_>,
        identity: &Identity,
        answers: Vec<(String, Result<Value, Refusal>)>,
        state: Option<&str>,
    ) -> Outgoing {
        let answers = input_responses(answers);
        self.id = id.clone();
        self.request(id, request, identity, Some((&answers, state)))
    }

    /// What to send when the caller stops waiting, while the call has no outcome (see
    /// [`Self::cancel_of`]). `None` once the call is over.
    pub fn cancel(&self) -> Option<Outgoing> {
        Self::cancel_of(&self.framing, self.carrier, self.in_flight()?)
    }

    /// The id of the request while it is unanswered, so a driver that must cancel it
    /// later (when the caller stops waiting) keeps an id, and builds the cancel with
    /// [`Self::cancel_of`] only if it is needed: most calls are answered.
    pub fn in_flight(&self) -> Option<RequestId> {
        (!self.finished).then(|| self.id.clone())
    }

    /// What cancels request `id` of a call in `framing` over `carrier`:
    /// `notifications/cancelled`, except over HTTP in the 2026 era, where closing the reply
    /// stream cancels (`None`).
    pub fn cancel_of(framing: &Framing, carrier: Carrier, id: RequestId) -> Option<Outgoing> {
        let reason = handshake::ABANDONED;
        match (framing, carrier) {
            (Framing::Stateless(_), Carrier::Http) => None,
            (framing @ Framing::Handshake { .. }, _) => handshake::cancel(framing, id, reason),
            (Framing::Stateless(_), Carrier::Process | Carrier::SharedProcess) => {
                let params = CancelledParams {
                    request_id: Some(id),
                    reason: Some(reason.to_owned()),
                    meta: None,
                    extra: Map::new(),
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

    fn finish(&mut self, outcome: Result<CallToolResult, CallError>) {
        self.finished = true;
        self.actions.push_back(Action::Finished(outcome));
    }

    fn input_required(&mut self, raw: &RawValue) {
        if !self.answers_input {
            self.finish(Err(CallError::NeedsInput(NeedsInput::Round)));
            return;
        }
        self.rounds += 1;
        if self.rounds > MAX_ROUNDS {
            self.finish(Err(CallError::Protocol(Violation::TooManyInputRounds(
                MAX_ROUNDS as usize,
            ))));
            return;
        }
        let Ok(result) = parse::<InputRequiredResult>(raw) else {
            self.finish(Err(CallError::Protocol(Violation::InvalidInputRequired)));
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
                    self.finish(Err(CallError::Protocol(Violation::InvalidInputRequest {
                        key: key.to_string(),
                        detail: e.to_string(),
                    })));
                    return;
                }
            }
        }
        self.actions.push_back(Action::InputRequired {
            requests,
            state: result.request_state,
        });
    }

    /// The progress token the call's notifications carry.
    pub fn progress_token(&self) -> &RequestId {
        &self.progress_token
    }

    /// A progress notification for our token, its numbers exactly as sent.
    fn progress(&self, params: &RawValue) -> Option<Progress> {
        super::progress::read(params, &self.progress_token)
    }
}
