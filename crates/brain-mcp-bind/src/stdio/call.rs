//! One `tools/call` over a child: the core's [`Call`] machine driven over a link, the
//! same machine and the same action handling ([`McpExecutor::act`]) as over HTTP.

use std::sync::Arc;

use brain_mcp_proto::client::{Call, CallError, CallRequest, Era, Framing, Outgoing, stdio};
use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_proto::mcp::CallToolResult;
use brain_tools_core::{ErrorKind, ExecContext, ToolFailure, ToolOutput};

use super::link::{Link, LinkError};
use super::{CLOSE_GRACE, StartError, StdioServer, link_text};
use crate::call::{McpExecutor, NO_ARGUMENTS, Next, read_budget, scope};
use crate::client::{CLEANUP_STEP_DEADLINE, Target};
use crate::exchange::StepError;
use crate::{convert, failure};

/// Runs the call of `tool` on `server` for `ctx`, as `executor` (its identity and
/// responder).
pub(crate) async fn execute(
    executor: &McpExecutor,
    server: &StdioServer,
    tool: &str,
    ctx: &ExecContext<'_>,
) -> Result<ToolOutput, ToolFailure> {
    let target = server.target();
    let era = server.era(ctx.deadline).await.map_err(before_call)?;
    let scope = scope(ctx);
    let client = executor.client();
    let id = client.next_id();
    let mut request = CallRequest::new(
        tool,
        ctx.call.arguments.as_object().unwrap_or(&NO_ARGUMENTS),
        progress_token(era, ctx, &id),
    );
    request.raw_meta = &scope;
    request.input_schema = Some(ctx.binding.input_schema());
    let limits = Limits {
        response: read_budget(ctx.binding.max_output_bytes()),
        message: client.http().config().message_limit,
    };
    let (link, framing, owned) = match era {
        Era::Stateless(v) => (
            server.shared(v, ctx.deadline).await.map_err(before_call)?,
            Framing::Stateless(v),
            false,
        ),
        _ => {
            let ready = server
                .take(ctx.deadline, false)
                .await
                .map_err(before_call)?;
            (Arc::new(ready.link), ready.framing, true)
        }
    };
    let (mut call, out) = Call::start(framing, id, &request, executor.identity());
    let mut guard = Guard {
        server: server.clone(),
        link: Some(link.clone()),
        cancel: None,
        owned,
    };
    ctx.mark_sent();
    let drive = Drive {
        executor,
        server,
        link: &link,
        target: &target,
        request: &request,
        ctx,
        limits,
    };
    let outcome = drive.run(&mut call, out, &mut guard).await;
    drop(link);
    drop(guard);
    let result = outcome?;
    server.worked();
    convert::convert(result, era).map_err(|e| failure::during_call(&target, e))
}

/// The progress token of a call: its `call_id`, as over HTTP, on a child of its own. A
/// shared 2026-era child routes progress by token alone, and callers (or tenants) may
/// reuse a `call_id`, so there the token is the call's first request id, unique in the
/// process: one call's progress never reaches another call.
fn progress_token(era: Era, ctx: &ExecContext<'_>, id: &RequestId) -> RequestId {
    match era {
        Era::Stateless(_) => id.clone(),
        _ => RequestId::String(ctx.call.call_id.clone()),
    }
}

/// What one message of a call may weigh, as over HTTP: the response spends the call's read
/// budget (twice `max_output_bytes` plus the envelope, per request); every other message
/// (progress, a server request) is capped on its own and spends none of it, so a tool may
/// report progress for as long as its deadline allows.
#[derive(Clone, Copy)]
struct Limits {
    response: usize,
    message: usize,
}

/// Everything one call's loop borrows.
struct Drive<'a> {
    executor: &'a McpExecutor,
    server: &'a StdioServer,
    link: &'a Link,
    target: &'a Target,
    request: &'a CallRequest<'a>,
    ctx: &'a ExecContext<'a>,
    limits: Limits,
}

impl Drive<'_> {
    /// Sends the call and reads until its outcome: every round, every line.
    async fn run(
        &self,
        call: &mut Call,
        mut out: Outgoing,
        guard: &mut Guard,
    ) -> Result<CallToolResult, ToolFailure> {
        let token = Some(self.request.progress_token.clone());
        let mut inbox = self.link.open(call.request_id().clone(), token);
        loop {
            guard.cancel = stdio::cancel(call);
            self.link.send(&out).await.map_err(lost)?;
            loop {
                let inbound = inbox.next().await.map_err(lost)?;
                let (limit, what) = if inbound.is_final_response {
                    (self.limits.response, "a response")
                } else {
                    (self.limits.message, "a message during the call")
                };
                if inbound.text.len() > limit {
                    return Err(ToolFailure::after_send(
                        ErrorKind::OutputTooLarge,
                        format!("the server sent {what} of more than {limit} bytes"),
                    ));
                }
                if inbound.is_final_response {
                    call.handle_response(&inbound.text);
                } else {
                    call.handle_message(&inbound.text);
                }
                let link = self.link;
                let send = |answer: Outgoing| async move {
                    let _ = link.send(&answer).await;
                };
                match self
                    .executor
                    .act(call, self.request, self.ctx, self.target, send)
                    .await
                {
                    Next::Read => {}
                    Next::Resend(next) => {
                        out = next;
                        inbox.retarget(call.request_id().clone());
                        break;
                    }
                    Next::Done(outcome) => {
                        guard.cancel = None;
                        return self.finished(outcome);
                    }
                }
            }
        }
    }

    fn finished(
        &self,
        outcome: Result<CallToolResult, CallError>,
    ) -> Result<CallToolResult, ToolFailure> {
        outcome.map_err(|e| {
            if let CallError::Rpc {
                forget_era: true, ..
            } = &e
            {
                self.server.forget_era();
            }
            failure::during_call(self.target, StepError::from(e))
        })
    }
}

/// The failure of a call whose child failed after `tools/call` may have been sent.
fn lost(e: LinkError) -> ToolFailure {
    match e {
        LinkError::TooLong(_) => ToolFailure::after_send(ErrorKind::OutputTooLarge, link_text(&e)),
        LinkError::Lost(why) => ToolFailure::after_send(
            ErrorKind::ConnectionLost,
            format!("the server process ended during the call ({why})"),
        ),
    }
}

/// A failure before `tools/call` was sent: no child, or no session.
fn before_call(e: StartError) -> ToolFailure {
    match e {
        StartError::Spawn(m) => ToolFailure::before_send(ErrorKind::ConnectFailed, m),
        StartError::Handshake(m) => ToolFailure::before_send(ErrorKind::HandshakeFailed, m),
    }
}

/// Ends the call's part of the child whatever happens: a `notifications/cancelled` if
/// the call had no outcome, then (for a child of its own) closing it, off the caller's
/// path.
struct Guard {
    server: StdioServer,
    link: Option<Arc<Link>>,
    cancel: Option<Outgoing>,
    owned: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Some(link) = self.link.take() else {
            return;
        };
        let cancel = self.cancel.take();
        let owned = self.owned;
        if cancel.is_none() && !owned {
            return;
        }
        self.server.inner.client.spawn_cleanup(async move {
            if let Some(cancel) = cancel {
                let _ = tokio::time::timeout(CLEANUP_STEP_DEADLINE, link.send(&cancel)).await;
            }
            if owned && let Ok(link) = Arc::try_unwrap(link) {
                link.shutdown(CLOSE_GRACE).await;
            }
        });
    }
}
