//! Following a task to its outcome: the core's [`Task`] says when to poll, what a status
//! means and when to fetch the result; this loop waits, sends and reads. Polling and
//! fetching are free of side effects, so a dropped connection or a busy server is met with
//! a backoff and the same request again, until the call's deadline (the pipeline drops
//! the call then, and the channel's cleanup cancels the task with `tasks/cancel`).
//! Every failure here comes after the tool started: `unknown_outcome` is true.

use std::time::Duration;

use brain_mcp_proto::client::task::{Next, STATUS_MESSAGE_LIMIT, Task};
use brain_mcp_proto::client::{Call, CallError, NeedsInput, Refusal, Violation};
use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_proto::mcp::CallToolResult;
use serde_json::Value;

use super::call::{Asked, Calling, awaited};
use super::error::{Cause, DriverError, Step, safe};
use super::request::request_reading;
use super::session::Channel;

/// The first wait after a poll or fetch that got no answer; it doubles up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between two attempts at a request that got no answer.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Follows `task` until it ends, reporting each new status message as progress; the
/// call's `progress_token` carries the progress of a result read as a call's reply.
pub(crate) async fn follow(
    channel: &mut Channel,
    calling: &Calling<'_>,
    mut task: Task,
    progress_token: RequestId,
) -> Result<CallToolResult, DriverError> {
    hold_cancel(channel, calling, &task);
    let mut next = task.start();
    let mut backoff = FIRST_BACKOFF;
    // Grows with every result read that got no answer, and only then: a server that
    // answers polls but never the result is not read at the first backoff forever.
    let mut fetch_backoff = FIRST_BACKOFF;
    // 2025-11-25: questions asked on the result's stream, answered once however often a
    // read of the result asks them again.
    let asked = Asked::default();
    let fetching = Calling {
        asker: calling.asker.remembering(&asked),
        ..*calling
    };
    // 2026: the answers given and not yet taken, sent again (never asked again) while the
    // task still asks.
    let mut given: Vec<(String, Result<Value, Refusal>)> = Vec::new();
    let outcome = loop {
        report(channel, calling, &mut task);
        let out = match next {
            Next::Poll(wait) => {
                tokio::time::sleep(wait).await;
                let id = calling.client.next_id();
                task.get(&channel.framing, id, calling.identity)
            }
            Next::Fetch => {
                // Read as a call's reply: in 2025-11-25 the task's questions come on it.
                let id = calling.client.next_id();
                let out = task.fetch(&channel.framing, id.clone(), calling.identity);
                let mut reading = Call::awaiting(
                    channel.framing.clone(),
                    channel.link.carrier(),
                    id,
                    progress_token.clone(),
                    calling.identity,
                );
                match awaited(channel, &fetching, &mut reading, out).await {
                    Ok(result) => {
                        // The task ended, whatever its last status said.
                        channel.cleanup.task = None;
                        break task.checked(result).map_err(core);
                    }
                    Err(e) => {
                        let e = DriverError {
                            step: Step::Task,
                            ..e
                        };
                        if !worth_again(&e) {
                            if matches!(e.cause, Cause::Core(_)) {
                                // The server's answer: the task ended.
                                channel.cleanup.task = None;
                            }
                            break Err(e);
                        }
                        // The status says what comes next: the result again once the
                        // task ended, or (bounded) its questions.
                        next = Next::Poll(fetch_backoff);
                        fetch_backoff = (fetch_backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                }
            }
            Next::Answer(questions) => {
                let mut answers = Vec::with_capacity(questions.len());
                for question in questions {
                    let answer = match given.iter().find(|(key, _)| *key == question.key) {
                        Some((_, answer)) => answer.clone(),
                        None => {
                            let answer = calling
                                .asker
                                .ask(&question.method, question.params.as_deref())
                                .await;
                            given.push((question.key.clone(), answer.clone()));
                            answer
                        }
                    };
                    answers.push((question.key, answer));
                }
                let id = calling.client.next_id();
                let out = task.update(&channel.framing, id, calling.identity, &answers);
                let (link, framing) = (&channel.link, &channel.framing);
                match request_reading(link, framing, out, Step::Task, calling.budget).await {
                    Ok(_) => {
                        given.retain(|(key, _)| !answers.iter().any(|(k, _)| k == key));
                        next = task.resume(answers.iter().map(|(key, _)| key.as_str()));
                    }
                    // The update may or may not have arrived: the next status says whether
                    // the task still asks (and with which state), and the same answers go
                    // again if it does.
                    Err(e) if worth_again(&e) => {
                        next = Next::Poll(backoff);
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                    Err(e) => break Err(e),
                }
                continue;
            }
            Next::InputRequired => {
                // Brain's bindings have no user: the task is cancelled (by the cleanup,
                // which still holds it) and the call fails as a direct one would.
                break Err(core(CallError::NeedsInput(NeedsInput::Task)));
            }
            Next::Finished(outcome) => break outcome.map_err(core),
            _ => {
                break Err(core(CallError::Protocol(Violation::UnknownStep(
                    "an unknown task step",
                ))));
            }
        };
        let (link, framing) = (&channel.link, &channel.framing);
        match request_reading(link, framing, out, Step::Task, calling.budget).await {
            Ok((status, _)) => {
                backoff = FIRST_BACKOFF;
                next = task.handle_status(&status);
                // The cancel echoes the state of the latest status.
                hold_cancel(channel, calling, &task);
            }
            Err(e) if worth_again(&e) => {
                next = Next::Poll(backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Err(e) => break Err(e),
        }
    };
    report(channel, calling, &mut task);
    // Nothing to cancel once the server says the task ended.
    if task.ended() {
        channel.cleanup.task = None;
    }
    outcome
}

/// Keeps the task's `tasks/cancel`, built from its latest status, for the channel's
/// cleanup to send if the call is dropped.
fn hold_cancel(channel: &mut Channel, calling: &Calling<'_>, task: &Task) {
    let id = calling.client.next_id();
    channel.cleanup.task = Some(task.cancel(&channel.framing, id, calling.identity));
}

/// Hands the task's new status message to the caller as the next step of progress.
fn report(channel: &Channel, calling: &Calling<'_>, task: &mut Task) {
    if let Some(message) = task.news() {
        // Made safe whole, then cut: a cut first could split a secret past recognition.
        let message = safe(&channel.link.secrets(), &message, STATUS_MESSAGE_LIMIT);
        calling.ctx.progress.advance(message);
    }
}

/// Whether a failed poll or fetch is worth sending again: no answer came (the connection
/// could not be made, broke, or went quiet) or the server was busy (5xx). A reply over
/// the budget, a refusal or the server's verdict is final.
fn worth_again(e: &DriverError) -> bool {
    match &e.cause {
        Cause::Link(link) => match link.status() {
            Some(status) => status.is_server_error(),
            None => {
                link.is_connect() || link.is_io() || link.is_stream_ended() || link.is_timeout()
            }
        },
        _ => false,
    }
}

fn core(e: CallError) -> DriverError {
    DriverError::new(Step::Task, Cause::Core(e))
}
