//! Tasks: a `tools/call` the server runs on its own, which the client polls for.
//!
//! A call asks for a task (2025-11-25: `params.task`); the server answers with the task
//! instead of the result. From then on every request is free of side effects and may be
//! repeated: `tasks/get` for the status, at the server's poll interval held between a
//! floor and a ceiling of ours; `tasks/result` for the outcome once the status is
//! terminal (2025-11-25; in the 2026 extension the status carries it); `tasks/cancel` to
//! stop it. A status message the client has not reported yet is news for the caller.
//! Statuses are decisions; waiting, sending and the deadline are the driver's.

use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, RequestId};

use super::call_error::CallError;
use super::framing::Framing;
use super::outgoing::{Expect, Identity, Outgoing};
use super::policy::{InputRequest, Refusal, input_responses};
use super::result::{check_result, read_result};
use super::violation::Violation;
use crate::mcp::{CallToolResult, ContentBlock, InputRequiredResult, parse};

pub use crate::mcp::TASKS_EXTENSION;
pub use crate::mcp::methods::{TASKS_CANCEL, TASKS_GET, TASKS_RESULT, TASKS_UPDATE};
/// The most questions one task may ask over its life.
pub const MAX_QUESTIONS: usize = 64;

/// The shortest wait between two polls, whatever the server asks.
pub const POLL_FLOOR: Duration = Duration::from_millis(250);
/// The longest wait between two polls, whatever the server asks (the call's deadline
/// bounds the whole task anyway).
pub const POLL_CEILING: Duration = Duration::from_secs(30);
/// The wait when the server names none.
pub const POLL_DEFAULT: Duration = Duration::from_secs(1);
/// The most bytes of a status message passed on: the driver cuts it there once the
/// message is made safe (a cut first could leave part of a secret unrecognised).
pub const STATUS_MESSAGE_LIMIT: usize = 512;
/// The most bytes of a task id kept: an id is echoed in every request.
pub const TASK_ID_LIMIT: usize = 256;
/// The most bytes of a task's `requestState` kept: it is echoed in every request.
pub const REQUEST_STATE_LIMIT: usize = 16 * 1024;

/// A task's status.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// Still running.
    Working,
    /// Waiting for input from the client.
    InputRequired,
    /// Done: its result is ready.
    Completed,
    /// Done: it failed.
    Failed,
    /// Done: it was cancelled.
    Cancelled,
}

/// What the driver does after a status.
#[derive(Debug)]
#[non_exhaustive]
pub enum Next {
    /// Wait this long, then send [`Task::get`] again.
    Poll(Duration),
    /// The task ended: send [`Task::fetch`] for its outcome (2025-11-25).
    Fetch,
    /// The task waits for input this client does not give: cancel it and end the call.
    InputRequired,
    /// The task asks these questions (2026): answer each, send [`Task::update`] with the
    /// answers, then [`Task::resume`].
    Answer(Vec<InputRequest>),
    /// The call is over.
    Finished(Result<CallToolResult, CallError>),
}

/// One task of a call.
#[derive(Debug)]
pub struct Task {
    id: String,
    status: Status,
    interval: Duration,
    message: Option<String>,
    /// The last message handed out, so a repeated one is not news.
    reported: Option<String>,
    /// The outcome carried by the status itself (the 2026 extension).
    outcome: Option<Result<CallToolResult, CallError>>,
    /// The call's framing: a task's result keeps the rules of the era it came in.
    framing: Framing,
    /// The server's opaque state from its last status, echoed in the next request (the
    /// 2026 extension); none when the last status had none.
    request_state: Option<String>,
    /// Whether the client answers requests for user input (a responder is installed).
    answers_input: bool,
    /// The questions of the last `input_required` status (2026).
    asked: Vec<InputRequest>,
    /// The keys whose answers the server took: each question is answered once.
    answered: HashSet<String>,
    /// Every key handed out to be answered, taken or not: at most [`MAX_QUESTIONS`].
    handed: HashSet<String>,
    /// Whether a `tasks/get` answer was read (a status, not the creation answer).
    polled: bool,
    /// How many times `tasks/result` was asked for before the task ended (2025-11-25:
    /// each may carry questions, so they are bounded as questions are).
    early_fetches: usize,
}

/// The members of a task status this client reads (2025-11-25 and the 2026 extension).
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "taskId")]
    task_id: String,
    status: String,
    #[serde(default, rename = "statusMessage")]
    status_message: Option<String>,
    #[serde(default, rename = "pollInterval")]
    poll_interval: Option<Value>,
    #[serde(default, rename = "pollIntervalMs")]
    poll_interval_ms: Option<Value>,
    #[serde(default, rename = "pollIntervalMilliseconds")]
    poll_interval_milliseconds: Option<Value>,
    #[serde(default, rename = "requestState")]
    request_state: Option<String>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Box<RawValue>>,
}

impl Task {
    /// The task a `tools/call` answered with, if the answer is one: a 2025-11-25
    /// `CreateTaskResult` (`{"task": {...}}`) or a 2026 `resultType: "task"`. `None` for
    /// any other answer.
    pub fn from_call_result(raw: &RawValue, framing: &Framing) -> Option<Result<Self, CallError>> {
        #[derive(Deserialize)]
        struct Outer<'a> {
            #[serde(default, borrow)]
            task: Option<&'a RawValue>,
            #[serde(default, rename = "resultType")]
            result_type: Option<String>,
            #[serde(default)]
            content: Option<&'a RawValue>,
        }
        let outer: Outer<'_> = serde_json::from_str(raw.get()).ok()?;
        let status = match (outer.task, outer.result_type.as_deref(), outer.content) {
            (Some(task), _, None) => task,
            (_, Some("task"), _) => raw,
            _ => return None,
        };
        // A task just created carries no outcome; any it claims is not used.
        Some(Self::read(status, framing).map(|(mut task, _)| {
            task.outcome = None;
            task
        }))
    }

    /// Reads a status: the task it describes.
    fn read(raw: &RawValue, framing: &Framing) -> Result<(Self, Status), CallError> {
        let wire: Wire = serde_json::from_str(raw.get())
            .map_err(|e| CallError::Protocol(Violation::InvalidTaskStatus(e.to_string())))?;
        if wire.task_id.is_empty() || wire.task_id.len() > TASK_ID_LIMIT {
            return Err(CallError::Protocol(Violation::InvalidTaskId(TASK_ID_LIMIT)));
        }
        if wire
            .request_state
            .as_ref()
            .is_some_and(|state| state.len() > REQUEST_STATE_LIMIT)
        {
            return Err(CallError::Protocol(Violation::RequestStateTooLong(
                REQUEST_STATE_LIMIT,
            )));
        }
        let status = match wire.status.as_str() {
            "working" => Status::Working,
            "input_required" => Status::InputRequired,
            "completed" => Status::Completed,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            other => {
                return Err(CallError::Protocol(Violation::UnknownTaskStatus(
                    other.to_owned(),
                )));
            }
        };
        let millis = wire
            .poll_interval_milliseconds
            .or(wire.poll_interval_ms)
            .or(wire.poll_interval)
            .as_ref()
            .and_then(Value::as_f64);
        let interval = millis.map_or(POLL_DEFAULT, |ms| {
            // Checked to be finite and within the ceiling before the conversion.
            if ms.is_finite() && ms > 0.0 {
                Duration::from_millis(ms.min(POLL_CEILING.as_millis() as f64) as u64)
            } else {
                POLL_FLOOR
            }
        });
        let outcome = match (&status, wire.result, wire.error) {
            (Status::Completed, Some(result), _) => Some(fetched(&result, framing)),
            (Status::Failed, _, Some(error)) => Some(Err(failed_with(&error))),
            _ => None,
        };
        // Whole (the reply's budget bounds it): the driver redacts, then cuts.
        let message = wire.status_message;
        let task = Self {
            id: wire.task_id,
            status: status.clone(),
            interval: interval.clamp(POLL_FLOOR, POLL_CEILING),
            message,
            reported: None,
            outcome,
            framing: framing.clone(),
            request_state: wire.request_state,
            answers_input: false,
            asked: match status {
                Status::InputRequired => questions(raw)?,
                _ => Vec::new(),
            },
            answered: HashSet::new(),
            handed: HashSet::new(),
            polled: false,
            early_fetches: 0,
        };
        Ok((task, status))
    }

    /// The same task, for a client that answers requests for user input (or not).
    #[must_use]
    pub fn answering(mut self, answers_input: bool) -> Self {
        self.answers_input = answers_input;
        self
    }

    /// What to do once the server took the answers to `keys`: poll again at the task's
    /// interval. Those questions are not asked again, however often a status repeats them.
    pub fn resume<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>) -> Next {
        self.answered.extend(keys.into_iter().map(str::to_owned));
        Next::Poll(self.interval)
    }

    /// The `tasks/update` request under `id` (2026): the answers to the task's questions,
    /// by key, a refusal as an error object. It may be sent again under a new id when no
    /// answer came: the answers are the same.
    pub fn update(
        &self,
        framing: &Framing,
        id: RequestId,
        identity: &Identity,
        answers: &[(String, Result<Value, Refusal>)],
    ) -> Outgoing {
        let responses = Value::Object(input_responses(answers.to_vec()));
        self.request_with(framing, TASKS_UPDATE, id, identity, Some(responses))
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The last status read.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// What to do first, once the call answered with this task.
    pub fn start(&mut self) -> Next {
        self.next()
    }

    /// A `tasks/get` result: the task's new status, and what to do next. A status for
    /// another task is the server's protocol error.
    pub fn handle_status(&mut self, raw: &RawValue) -> Next {
        match Self::read(raw, &self.framing) {
            Ok((read, _)) if read.id != self.id => {
                Next::Finished(Err(CallError::Protocol(Violation::OtherTask)))
            }
            Ok((read, status)) => {
                self.polled = true;
                self.status = status;
                self.interval = read.interval;
                self.outcome = read.outcome;
                self.request_state = read.request_state;
                self.asked = read.asked;
                if read.message.is_some() {
                    self.message = read.message;
                }
                self.next()
            }
            Err(e) => Next::Finished(Err(e)),
        }
    }

    fn next(&mut self) -> Next {
        match self.status {
            Status::Working => Next::Poll(self.interval),
            Status::InputRequired if !self.answers_input => Next::InputRequired,
            // 2025-11-25: the questions come on the stream of `tasks/result`, which is
            // read as a call's reply is (the responder answers them there).
            Status::InputRequired if matches!(self.framing, Framing::Handshake { .. }) => {
                self.early_fetches += 1;
                if self.early_fetches > MAX_QUESTIONS {
                    return Next::Finished(Err(CallError::Protocol(
                        Violation::ResultAskedTooOften(MAX_QUESTIONS),
                    )));
                }
                Next::Fetch
            }
            Status::InputRequired => {
                let new: Vec<InputRequest> = std::mem::take(&mut self.asked)
                    .into_iter()
                    .filter(|q| !self.answered.contains(&q.key))
                    .collect();
                if new.is_empty() {
                    return Next::Poll(self.interval);
                }
                let unseen = new.iter().filter(|q| !self.handed.contains(&q.key)).count();
                if self.handed.len() + unseen > MAX_QUESTIONS {
                    return Next::Finished(Err(CallError::Protocol(Violation::TooManyQuestions(
                        MAX_QUESTIONS,
                    ))));
                }
                self.handed.extend(new.iter().map(|q| q.key.clone()));
                Next::Answer(new)
            }
            Status::Cancelled => Next::Finished(Err(CallError::Protocol(Violation::TaskCancelled))),
            Status::Completed | Status::Failed => match (self.outcome.take(), &self.framing) {
                (Some(outcome), _) => Next::Finished(outcome),
                (None, Framing::Handshake { .. }) => Next::Fetch,
                // 2026: the outcome comes with a polled status (a task created already
                // ended is polled once for it); there is no request that fetches it.
                (None, Framing::Stateless(_)) if !self.polled => Next::Poll(POLL_FLOOR),
                (None, Framing::Stateless(_)) => {
                    Next::Finished(Err(CallError::Protocol(Violation::NoOutcome)))
                }
            },
        }
    }

    /// A status message not handed out yet: each message is news once, however often it
    /// is read.
    pub fn news(&mut self) -> Option<String> {
        let message = self.message.as_ref()?;
        if self.reported.as_ref() == Some(message) {
            return None;
        }
        self.reported = Some(message.clone());
        Some(message.clone())
    }

    /// Whether the last status read ends the task on the server's side (nothing left to
    /// cancel).
    pub fn ended(&self) -> bool {
        matches!(
            self.status,
            Status::Completed | Status::Failed | Status::Cancelled
        )
    }

    /// The call's outcome from a `tasks/result` answer, read and checked as a direct
    /// result is.
    pub fn read_fetched(&self, raw: &RawValue) -> Result<CallToolResult, CallError> {
        fetched(raw, &self.framing)
    }

    /// A result already read (a `tasks/result` reply read as a call's), checked against
    /// the rules of its era.
    pub fn checked(&self, result: CallToolResult) -> Result<CallToolResult, CallError> {
        check_result(result, &self.framing)
    }

    /// The `tasks/get` request under `id` (free of side effects: it may be sent again).
    pub fn get(&self, framing: &Framing, id: RequestId, identity: &Identity) -> Outgoing {
        self.request(framing, TASKS_GET, id, identity, true)
    }

    /// The `tasks/result` request under `id` (2025-11-25): it is answered once the task is
    /// terminal, with the call's result or its JSON-RPC error.
    pub fn fetch(&self, framing: &Framing, id: RequestId, identity: &Identity) -> Outgoing {
        self.request(framing, TASKS_RESULT, id, identity, true)
    }

    /// The `tasks/cancel` request under `id`.
    pub fn cancel(&self, framing: &Framing, id: RequestId, identity: &Identity) -> Outgoing {
        self.request(framing, TASKS_CANCEL, id, identity, false)
    }

    fn request(
        &self,
        framing: &Framing,
        method: &'static str,
        id: RequestId,
        identity: &Identity,
        idempotent: bool,
    ) -> Outgoing {
        let mut out = self.request_with(framing, method, id, identity, None);
        out.idempotent = idempotent;
        out
    }

    fn request_with(
        &self,
        framing: &Framing,
        method: &'static str,
        id: RequestId,
        identity: &Identity,
        responses: Option<Value>,
    ) -> Outgoing {
        let mut params = Map::new();
        if let Some(responses) = responses {
            params.insert("inputResponses".into(), responses);
        }
        params.insert("taskId".into(), Value::String(self.id.clone()));
        if let Some(state) = &self.request_state {
            params.insert("requestState".into(), Value::String(state.clone()));
        }
        if let Framing::Stateless(_) = framing
            && let Ok(meta) = serde_json::to_value(framing.meta(identity))
        {
            params.insert("_meta".into(), meta);
        }
        let body = jsonrpc::encode_request(&id, method, &params).unwrap_or_default();
        Outgoing::new(
            method,
            body,
            framing.headers(method, Some(&self.id), Vec::new()),
            Expect::Response(id),
        )
    }
}

/// The questions of an `input_required` status (2026: `inputRequests`; none in 2025-11-25,
/// whose questions come on the `tasks/result` stream).
fn questions(raw: &RawValue) -> Result<Vec<InputRequest>, CallError> {
    let status: InputRequiredResult = parse(raw)
        .map_err(|e| CallError::Protocol(Violation::InvalidInputRequiredTask(e.to_string())))?;
    status
        .requests()
        .into_iter()
        .map(|(key, request)| match request {
            Ok(r) => Ok(InputRequest {
                key,
                method: r.method,
                params: r.params,
            }),
            Err(e) => Err(CallError::Protocol(Violation::InvalidInputRequest {
                key,
                detail: e.to_string(),
            })),
        })
        .collect()
}

/// A task's result, read and checked against the rules of its era as a direct one is.
fn fetched(raw: &RawValue, framing: &Framing) -> Result<CallToolResult, CallError> {
    let result = read_result(raw)?.ok_or(CallError::Protocol(Violation::TaskResultAsksInput))?;
    check_result(result, framing)
}

/// A failed task's `error` (2026 extension): the same error a direct call would get.
fn failed_with(error: &RawValue) -> CallError {
    let body = format!(r#"{{"jsonrpc":"2.0","id":null,"error":{}}}"#, error.get());
    match super::rpc_error::RpcError::from_body(body.as_bytes()) {
        Some(error) => CallError::Rpc {
            error,
            forget_era: false,
        },
        None => CallError::Protocol(Violation::FailedTaskError),
    }
}

/// Whether a direct call's answer says the tool runs only as a task: the JSON-RPC error
/// of the 2026 extension (-32021 naming the extension in its data), or of 2025-11-25 (-32601 or -32600 naming task
/// augmentation), also when an SDK wrapped it in an error result's text.
pub fn says_task_required(outcome: Result<&CallToolResult, &CallError>) -> bool {
    const WORDS: &str = "task augmentation";
    match outcome {
        Err(CallError::Rpc { error, .. }) => {
            // -32021 names every missing capability; only the tasks extension is ours.
            (error.code.0 == -32021
                && error.data_text().is_some_and(|d| d.contains(TASKS_EXTENSION)))
                || (matches!(error.code.0, -32601 | -32600)
                    && error.message.to_ascii_lowercase().contains(WORDS))
        }
        Ok(result) if result.failed() => result.content.iter().any(|block| {
            matches!(block, ContentBlock::Text(t) if t.text.len() < 4096 && t.text.contains(WORDS))
        }),
        _ => false,
    }
}
