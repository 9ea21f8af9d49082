//! The one call loop: a `tools/call` of the core's [`Call`] machine driven over a channel,
//! whatever carries it, from the request to its outcome.

use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, PoisonError};

use brain_mcp_proto::client::task::{MAX_QUESTIONS, Task, says_task_required};
use brain_mcp_proto::client::{
    Action, Call, CallError, CallRequest, Identity, InputRequest, Outgoing, Refusal, Violation,
};
use brain_mcp_proto::jsonrpc::{ErrorCode, RequestId};
use brain_mcp_proto::mcp::CallToolResult;
use brain_mcp_proto::text::FRAGMENT_LIMIT;
use brain_tools_core::{ExactNumber, ExecContext};
use serde_json::Value;
use serde_json::value::RawValue;

use super::error::{Cause, DriverError, Step, safe};
use super::session::Channel;
use crate::client::McpClient;
use crate::link::LinkError;

use super::request::ended;
use crate::observe::{self, Failure, Operation};
use crate::responder::{Responder, ServerRequest};
use tracing::Instrument;

/// Who answers a server's requests for user input during one call: the executor's
/// responder, told whose call it is, or nobody (a refusal: Brain's bindings have no user).
#[derive(Clone, Copy)]
pub(crate) struct Asker<'a> {
    responder: Option<&'a dyn Responder>,
    ctx: &'a ExecContext<'a>,
    /// Answers given so far, when a question asked again is answered the same.
    asked: Option<&'a Asked>,
}

/// The answers given to the requests of one task's result streams (2025-11-25), by
/// request (its id, method and parameters): a read of the result that breaks is made
/// again, and the server may ask again what was answered. At most
/// [`MAX_QUESTIONS`](brain_mcp_proto::client::task::MAX_QUESTIONS) are asked; past them,
/// each new one is refused.
#[derive(Default)]
pub(crate) struct Asked {
    keys: RandomState,
    answers: Mutex<Vec<(u64, Result<Value, Refusal>)>>,
}

impl<'a> Asker<'a> {
    /// The executor's `responder` (none: every request refused) for the call of `ctx`.
    pub(crate) fn new(responder: Option<&'a dyn Responder>, ctx: &'a ExecContext<'a>) -> Self {
        Self {
            responder,
            ctx,
            asked: None,
        }
    }

    /// The same asker, answering a request asked again from `asked`.
    pub(super) fn remembering(self, asked: &'a Asked) -> Self {
        Self {
            asked: Some(asked),
            ..self
        }
    }

    /// Answers a server's request `id`: from memory when it was answered before.
    async fn ask_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Value, Refusal> {
        let Some(asked) = self.asked else {
            return self.ask(method, params).await;
        };
        let key = asked.keys.hash_one((id, method, params.map(RawValue::get)));
        let lock = || asked.answers.lock().unwrap_or_else(PoisonError::into_inner);
        {
            let answers = lock();
            if let Some((_, answer)) = answers.iter().find(|(k, _)| *k == key) {
                return answer.clone();
            }
            if answers.len() >= MAX_QUESTIONS {
                return Err(Refusal::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("this task asked more than {MAX_QUESTIONS} questions"),
                ));
            }
        }
        let answer = self.ask(method, params).await;
        lock().push((key, answer.clone()));
        answer
    }

    pub(super) async fn ask(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Value, Refusal> {
        match self.responder {
            Some(responder) => {
                let call = self.ctx.call;
                let request = ServerRequest {
                    tenant: &call.tenant,
                    call_id: &call.call_id,
                    tool: self.ctx.binding.name(),
                    method,
                    params,
                };
                responder.answer(&request).await
            }
            None => Err(Refusal::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("{method} is not supported: this client has no user to ask"),
            )),
        }
    }
}

/// What the loop does once the core's actions for a message are handled.
enum Next {
    /// Read the next message.
    Read,
    /// The server needs these answers from the user: a new round follows.
    InputRequired(Vec<InputRequest>, Option<String>),
    /// The call is over.
    Done(Result<CallToolResult, CallError>),
    /// The server runs the call as a task: follow it.
    Task(Box<Task>),
}

/// What one call needs besides its channel.
#[derive(Clone, Copy)]
pub(crate) struct Calling<'a> {
    pub(crate) client: &'a McpClient,
    pub(crate) identity: &'a Identity,
    pub(crate) asker: Asker<'a>,
    pub(crate) request: &'a CallRequest<'a>,
    pub(crate) ctx: &'a ExecContext<'a>,
    /// The read budget of each response.
    pub(crate) budget: usize,
}

/// Runs the call on `channel`: every POST (one, or more for `input_required` rounds),
/// every message of every reply; notes on the call's span how many exchanges it took and
/// the bytes received.
pub(crate) async fn call(
    channel: &mut Channel,
    calling: &Calling<'_>,
) -> Result<CallToolResult, DriverError> {
    let (mut call, out) = Call::start(
        channel.framing.clone(),
        channel.link.carrier(),
        calling.client.next_id(),
        calling.request,
        calling.identity,
    );
    calling.ctx.mark_sent();
    let mut traffic = (0u64, 0u64);
    let (mut outcome, tasked) = run(channel, calling, &mut call, out, &mut traffic).await;
    // A tool that runs only as a task, called directly: the server's refusal (an error,
    // or an SDK's error result) becomes the one error that says what to do. An outcome
    // of a task is never that refusal: the tool ran.
    if calling.request.task.is_none() && !tasked {
        let required = match &outcome {
            Ok(result) => says_task_required(Ok(result)),
            Err(DriverError {
                cause: Cause::Core(e),
                ..
            }) => says_task_required(Err(e)),
            Err(_) => false,
        };
        if required {
            outcome = Err(DriverError::new(
                Step::Call,
                Cause::Core(CallError::TaskRequired),
            ));
        }
    }
    // Nothing to cancel once the core has the outcome (an answer, or a refusal).
    channel.cleanup.in_flight = call.in_flight();
    observe::call_traffic(traffic.0, traffic.1);
    outcome
}

/// Drives the call's rounds to its outcome; says too whether the call went on as a task.
async fn run(
    channel: &mut Channel,
    calling: &Calling<'_>,
    call: &mut Call,
    mut out: Outgoing,
    (exchanges, bytes_in): &mut (u64, u64),
) -> (Result<CallToolResult, DriverError>, bool) {
    let tool = Some(calling.request.tool);
    loop {
        channel.cleanup.in_flight = call.in_flight();
        *exchanges += 1;
        let link = &channel.link;
        let op = Operation::start(link.peer(), &channel.framing, &out, tool, || link.secrets());
        let round = round(channel, calling, call, out, bytes_in)
            .instrument(op.span())
            .await
            .and_then(|round| match round {
                Next::Done(Err(e)) => Err(DriverError::new(Step::Call, Cause::Core(e))),
                round => Ok(round),
            });
        let failure = match &round {
            Err(e) => Some(e.failure()),
            Ok(Next::Done(Ok(result))) if result.is_error == Some(true) => {
                Some(Failure::of("tool_error"))
            }
            Ok(_) => None,
        };
        // The operation ends with its answer: the user's answers come after it.
        op.end(failure, || link.secrets());
        let round = match round {
            Ok(round) => round,
            Err(e) => return (Err(e), false),
        };
        match round {
            Next::Task(task) => {
                channel.cleanup.in_flight = None;
                let token = call.progress_token().clone();
                // Boxed: following a task (about 7 KB of state) is rare, and inline it
                // would double the size of every call's future, moved at each await.
                let followed = Box::pin(super::task::follow(channel, calling, *task, token));
                return (followed.await, true);
            }
            Next::InputRequired(requests, state) => {
                out = answer_input(calling, call, requests, state).await;
            }
            Next::Done(outcome) => {
                let outcome = outcome.map_err(|e| DriverError::new(Step::Call, Cause::Core(e)));
                return (outcome, false);
            }
            // `round` reads on until the core says more than "read on".
            Next::Read => {
                return (
                    Err(DriverError::new(Step::Call, Cause::Core(ended()))),
                    false,
                );
            }
        }
    }
}

/// The next round of an `input_required` call: `requests` asked of the user, their
/// answers and `state` in a `tools/call` under a new id.
async fn answer_input(
    calling: &Calling<'_>,
    call: &mut Call,
    requests: Vec<InputRequest>,
    state: Option<String>,
) -> Outgoing {
    let mut answers = Vec::with_capacity(requests.len());
    for asked in requests {
        let answer = calling
            .asker
            .ask(&asked.method, asked.params.as_deref())
            .await;
        answers.push((asked.key, answer));
    }
    let id = calling.client.next_id();
    call.retry(
        id,
        calling.request,
        calling.identity,
        answers,
        state.as_deref(),
    )
}

/// `out` sent and its reply read by `call` (made with `Call::awaiting`) to the outcome:
/// server requests on the way go to the asker, progress to the caller, as in a call.
pub(super) async fn awaited(
    channel: &Channel,
    calling: &Calling<'_>,
    call: &mut Call,
    out: Outgoing,
) -> Result<CallToolResult, DriverError> {
    let mut bytes = 0;
    match round(channel, calling, call, out, &mut bytes).await? {
        Next::Done(outcome) => outcome.map_err(|e| DriverError::new(Step::Call, Cause::Core(e))),
        _ => Err(DriverError::new(
            Step::Call,
            Cause::Core(CallError::Protocol(Violation::TaskResultAsksCall)),
        )),
    }
}

/// One `tools/call` sent and its reply read until the core says what comes next (never
/// [`Next::Read`]).
async fn round(
    channel: &Channel,
    calling: &Calling<'_>,
    call: &mut Call,
    out: Outgoing,
    bytes_in: &mut u64,
) -> Result<Next, DriverError> {
    let mut replies = match channel.link.request(out, calling.budget).await {
        Ok(replies) => replies,
        Err(e) => return Err(failed(call, e)),
    };
    loop {
        let received = match replies.next().await {
            Some(Ok(received)) => received,
            Some(Err(e)) => return Err(failed(call, e)),
            None => return Err(DriverError::new(Step::Call, Cause::Core(ended()))),
        };
        *bytes_in += received.bytes as u64;
        call.handle(received.message);
        match act(channel, calling, call).await {
            Next::Read => {}
            next => return Ok(next),
        }
    }
}

/// Does what the core asks after one message, in order: answers and refusals go out
/// (best effort), progress goes to the caller (its message made safe), requests for user
/// input go to the asker.
async fn act(channel: &Channel, calling: &Calling<'_>, call: &mut Call) -> Next {
    while let Some(action) = call.poll() {
        match action {
            // Boxed, as below: answers are rare, and their sends' state would otherwise
            // sit in every call's future.
            Action::Send(answer) => Box::pin(channel.link.notify(answer)).await,
            Action::Progress(p) => {
                let secrets = &channel.link.secrets();
                let message = p.message.map(|m| safe(secrets, &m, FRAGMENT_LIMIT));
                // The core passes only numbers on.
                if let Some(progress) = ExactNumber::from_raw(p.progress) {
                    let total = p.total.and_then(ExactNumber::from_raw);
                    calling.ctx.progress.report(progress, total, message);
                }
            }
            Action::Ask { id, method, params } => {
                let answer = calling
                    .asker
                    .ask_request(&id, &method, params.as_deref())
                    .await;
                let reply = call.answer(&id, answer);
                Box::pin(channel.link.notify(reply)).await;
            }
            Action::InputRequired { requests, state } => {
                return Next::InputRequired(requests, state);
            }
            Action::Finished(outcome) => return Next::Done(outcome),
            Action::Task(task) => return Next::Task(task),
            _ => {}
        }
    }
    Next::Read
}

/// A link failure during the call, unless the core decides what its status means.
fn failed(call: &mut Call, e: impl Into<LinkError>) -> DriverError {
    DriverError::from_link(Step::Call, e, |status, rpc, challenge| {
        if !call.handle_status(status, rpc, challenge) {
            return None;
        }
        std::iter::from_fn(|| call.poll()).find_map(|action| match action {
            Action::Finished(Err(decided)) => Some(decided),
            _ => None,
        })
    })
}
