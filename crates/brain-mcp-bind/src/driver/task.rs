//! Following a task to its outcome: the core's [`Task`] says when to poll, what a status
//! means and when to fetch the result; this loop waits, sends and reads. Polling and
//! fetching are free of side effects, so a dropped connection or a busy server is met with
//! a backoff and the same request again, until the call's deadline (the pipeline drops
//! the call then, and the channel's cleanup cancels the task with `tasks/cancel`).

use std::time::Duration;

use brain_mcp_proto::client::CallError;
use brain_mcp_proto::client::task::{Next, Task, read_fetched};
use brain_mcp_proto::mcp::CallToolResult;
use brain_mcp_proto::text::FRAGMENT_LIMIT;
use brain_mcp_transport::{Delivery, ErrorKind as TransportKind};
use brain_tools_core::ExactNumber;

use super::call::Calling;
use super::error::{Cause, DriverError, Step, safe};
use super::request::request;
use super::session::Channel;

/// The first wait after a poll that got no answer; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between two attempts at a poll that got no answer.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Follows `task` until it ends, reporting each new status message as progress.
pub(crate) async fn follow(
    channel: &mut Channel,
    calling: &Calling<'_>,
    mut task: Task,
) -> Result<CallToolResult, DriverError> {
    channel.cleanup.task =
        Some(task.cancel(&channel.framing, calling.client.next_id(), calling.identity));
    let mut next = task.start();
    let mut backoff = FIRST_BACKOFF;
    let outcome = loop {
        report(channel, calling, &mut task);
        match next {
            Next::Poll(wait) => {
                tokio::time::sleep(wait).await;
                let out = task.get(&channel.framing, calling.client.next_id(), calling.identity);
                match request(&channel.link, &channel.framing, out, Step::Call).await {
                    Ok((status, _)) => {
                        backoff = FIRST_BACKOFF;
                        next = task.handle_status(&status);
                    }
                    Err(e) if worth_again(&e) => {
                        next = Next::Poll(backoff);
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                    Err(e) => break Err(e),
                }
            }
            Next::Fetch => {
                let out = task.fetch(&channel.framing, calling.client.next_id(), calling.identity);
                match request(&channel.link, &channel.framing, out, Step::Call).await {
                    Ok((result, _)) => {
                        break read_fetched(&result).map_err(core);
                    }
                    Err(e) if worth_again(&e) => {
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                    Err(e) => break Err(e),
                }
            }
            Next::InputRequired => {
                // Brain's bindings have no user: the task is cancelled (by the cleanup,
                // which still holds it) and the call fails as a direct one would.
                return Err(core(CallError::NeedsInput(
                    "the task waits for user input this client cannot give".into(),
                )));
            }
            Next::Finished(outcome) => break outcome.map_err(core),
            _ => break Err(core(CallError::Protocol("an unknown task step".into()))),
        }
    };
    // Ended on the server's side: nothing to cancel.
    channel.cleanup.task = None;
    outcome
}

/// Hands the task's new status message to the caller as progress, made safe.
fn report(channel: &Channel, calling: &Calling<'_>, task: &mut Task) {
    if let Some((count, message)) = task.news() {
        let message = safe(&channel.link.secrets(), &message, FRAGMENT_LIMIT);
        calling
            .ctx
            .progress
            .report(ExactNumber::from(count), None, Some(message));
    }
}

/// Whether a failed poll or fetch is worth sending again: the link failed (no answer, or
/// a connection that broke), not the server's verdict.
fn worth_again(e: &DriverError) -> bool {
    match &e.cause {
        Cause::Link(link) => match link.kind() {
            TransportKind::Status { status, .. } => status.is_server_error(),
            _ => link.delivery() != Delivery::Answered,
        },
        _ => false,
    }
}

fn core(e: CallError) -> DriverError {
    DriverError::new(Step::Call, Cause::Core(e))
}
