//! The executor behind MCP bindings: drives one `tools/call` of the client core over the
//! transport, in whichever era the server speaks.

use std::sync::Arc;

use async_trait::async_trait;
use brain_mcp_proto::client::{Action, Call, CallError, CallRequest, Framing, Identity, Outgoing};
use brain_mcp_proto::jsonrpc::{ErrorCode, RequestId};
use brain_mcp_proto::mcp::CallToolResult;
use brain_mcp_proto::text::FRAGMENT_LIMIT;
use brain_mcp_transport::{BearerToken, ErrorKind as TransportKind, PostReply};
use brain_tools_core::{ErrorKind, ExecContext, ToolExecutor, ToolFailure, ToolOutput};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::client::{McpClient, Target};
use crate::exchange::{self, StepError};
use crate::responder::{Refusal, Responder};
use crate::{convert, failure, observe, probe, redact};
use brain_mcp_proto::client::Era;

/// What a call's driver does once the core's actions for a message are handled.
#[derive(Debug)]
pub(crate) enum Next {
    /// Read the next message.
    Read,
    /// Send this `tools/call` (an `input_required` round under a new id) and read its reply.
    Resend(Outgoing),
    /// The call is over: the raw result, or why there is none.
    Done(Result<CallToolResult, CallError>),
}

/// What one call sent and received, for its span.
#[derive(Debug, Default)]
struct Traffic {
    /// The read budget of each reply.
    budget: usize,
    /// POSTs of `tools/call` (more than one with `input_required` rounds).
    exchanges: u64,
    /// Bytes of the messages received.
    bytes_in: u64,
}

/// Extra room in a call's read budget over twice `max_output_bytes`, for the JSON-RPC
/// envelope; the exact limit is applied to the converted output. Messages before the
/// result (progress) spend none of it: the transport caps them one by one.
pub const ENVELOPE_ALLOWANCE: usize = 64 * 1024;

/// Runs MCP bindings. Share one per process: it holds the connection pool and era cache.
#[derive(Clone)]
pub struct McpExecutor {
    client: McpClient,
    responder: Option<Arc<dyn Responder>>,
    identity: Identity,
}

impl std::fmt::Debug for McpExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpExecutor")
            .field("client", &self.client)
            .field("responder", &self.responder.is_some())
            .finish()
    }
}

impl McpExecutor {
    /// An executor using `client`, refusing every request for user input (Brain's
    /// bindings have no user to ask).
    pub fn new(client: McpClient) -> Self {
        let identity = client.identity().clone();
        Self {
            client,
            responder: None,
            identity,
        }
    }

    /// An executor whose calls declare `responder`'s capabilities and hand it every
    /// request for user input, in either era (an elicitation on a handshake-era stream, or
    /// a 2026 `input_required` round, retried with its answers). For applications that
    /// have a user; off by default.
    pub fn with_responder(client: McpClient, responder: Arc<dyn Responder>) -> Self {
        let identity = client
            .identity()
            .clone()
            .with_capabilities(responder.capabilities());
        Self {
            client,
            responder: Some(responder),
            identity,
        }
    }

    /// The shared client (for [`McpClient::flush`] before exit).
    pub fn client(&self) -> &McpClient {
        &self.client
    }

    /// Who the calls say they are: `clientInfo` and the declared capabilities.
    pub(crate) fn identity(&self) -> &Identity {
        &self.identity
    }
}

#[async_trait]
impl ToolExecutor for McpExecutor {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        let binding = ctx.binding;
        let bearer = ctx.token.as_ref().map(|t| BearerToken::new(t.expose()));
        let Some(mcp) = binding.mcp() else {
            return Err(ToolFailure::before_send(
                ErrorKind::ConnectFailed,
                format!(
                    "binding {:?} is not an MCP binding (url and mcp_tool are required)",
                    binding.name()
                ),
            ));
        };
        let tool = mcp.tool();
        let target = Target::checked(mcp.url(), bearer)
            .map_err(|m| ToolFailure::before_send(ErrorKind::ConnectFailed, m))?
            .with_headers(binding.headers())
            .with_secrets(self.client.proxy_secrets());
        observe::call_target(&target, tool);
        match self.execute_at(&target, tool, &ctx).await {
            Ok(output) => Ok(redact::output(&target, output)),
            Err(failure) => Err(redact::failure(&target, failure)),
        }
    }
}

impl McpExecutor {
    /// Runs the call at `target`; what it returns may still hold the token.
    async fn execute_at(
        &self,
        target: &Target,
        tool: &str,
        ctx: &ExecContext<'_>,
    ) -> Result<ToolOutput, ToolFailure> {
        let binding = ctx.binding;
        let era = probe::era_of(&self.client, target, ctx.deadline)
            .await
            .map_err(|e| failure::before_call(target, e))?;
        let scope = scope(ctx);
        let mut request = CallRequest::new(
            tool,
            ctx.call.arguments.as_object().unwrap_or(&NO_ARGUMENTS),
            RequestId::String(ctx.call.call_id.clone()),
        );
        request.raw_meta = &scope;
        request.input_schema = Some(binding.input_schema());
        let budget = read_budget(binding.max_output_bytes());
        let answer = match era {
            Era::Handshake => {
                let mut session = probe::open_session(&self.client, target, &self.identity)
                    .await
                    .map_err(|e| failure::before_call(target, e))?;
                let framing = session.framing().clone();
                let (mut call, out) =
                    Call::start(framing, self.client.next_id(), &request, &self.identity);
                session.set_in_flight(call.in_flight());
                ctx.mark_sent();
                let answer = self
                    .run(target, &mut call, out, &request, ctx, budget)
                    .await;
                if matches!(answer, Ok(_) | Err(StepError::Rpc { .. })) {
                    // The server answered: there is nothing to cancel.
                    session.set_in_flight(None);
                }
                drop(session);
                answer
            }
            Era::Stateless(version) => {
                let framing = Framing::Stateless(version);
                let (mut call, out) =
                    Call::start(framing, self.client.next_id(), &request, &self.identity);
                ctx.mark_sent();
                self.run(target, &mut call, out, &request, ctx, budget)
                    .await
            }
            _ => Err(StepError::Protocol(format!(
                "era {} is not supported",
                era.describe()
            ))),
        };
        answer
            .and_then(|result| convert::convert(result, era))
            .map_err(|e| failure::during_call(target, e))
    }

    /// Drives `call` from its first message `out` to its outcome, and notes on the call's
    /// span how many exchanges it took and the bytes of the messages received.
    async fn run(
        &self,
        target: &Target,
        call: &mut Call,
        out: Outgoing,
        request: &CallRequest<'_>,
        ctx: &ExecContext<'_>,
        budget: usize,
    ) -> Result<CallToolResult, StepError> {
        let mut traffic = Traffic {
            budget,
            ..Traffic::default()
        };
        let result = self
            .run_counted(target, call, out, request, ctx, &mut traffic)
            .await;
        observe::call_traffic(traffic.exchanges, traffic.bytes_in);
        result
    }

    /// Every POST of the call (one, or more for `input_required` rounds), every message
    /// of every reply, counted in `traffic`.
    async fn run_counted(
        &self,
        target: &Target,
        call: &mut Call,
        mut out: Outgoing,
        request: &CallRequest<'_>,
        ctx: &ExecContext<'_>,
        traffic: &mut Traffic,
    ) -> Result<CallToolResult, StepError> {
        loop {
            traffic.exchanges += 1;
            let reply = match exchange::post(&self.client, target, out, traffic.budget).await {
                Ok(reply) => reply,
                Err(e) => return self.after_error(target, call, e),
            };
            let PostReply::Stream(mut stream) = reply else {
                return Err(StepError::Protocol(
                    "the server accepted tools/call without answering it".into(),
                ));
            };
            'reply: loop {
                let inbound = match exchange::next(&mut stream).await {
                    Ok(inbound) => inbound,
                    Err(StepError::Transport(e)) => return self.after_error(target, call, e),
                    Err(other) => return Err(other),
                };
                traffic.bytes_in += inbound.text.len() as u64;
                if inbound.is_final_response {
                    call.handle_response(&inbound.text);
                } else {
                    call.handle_message(&inbound.text);
                }
                let send = |answer| exchange::post_unanswered(&self.client, target, answer);
                match self.act(call, request, ctx, target, send).await {
                    Next::Read => {}
                    Next::Resend(next) => {
                        drop(stream);
                        out = next;
                        break 'reply;
                    }
                    Next::Done(outcome) => return self.finished(target, outcome),
                }
            }
        }
    }

    /// Does what the core asks after one message of the call's reply, in order: answers
    /// and refusals go out through `send` (best effort), progress goes to the caller (its
    /// message made safe for `target`), requests for user input go to the responder.
    /// Shared by every driver of a call (HTTP here, stdio in [`crate::stdio`]).
    pub(crate) async fn act<F, S>(
        &self,
        call: &mut Call,
        request: &CallRequest<'_>,
        ctx: &ExecContext<'_>,
        target: &Target,
        mut send: S,
    ) -> Next
    where
        S: FnMut(Outgoing) -> F,
        F: Future<Output = ()>,
    {
        while let Some(action) = call.poll() {
            match action {
                Action::Send(answer) => send(answer).await,
                Action::Progress(p) => {
                    let message = p.message.map(|m| failure::safe(target, &m, FRAGMENT_LIMIT));
                    ctx.progress.report(p.progress, p.total, message);
                }
                Action::Ask { id, method, params } => {
                    let answer = self.ask(&method, params.as_deref()).await;
                    let reply = call.answer(&id, answer);
                    send(reply).await;
                }
                Action::InputRequired { requests, state } => {
                    let mut answers = Map::new();
                    for asked in requests {
                        let answer = self.ask(&asked.method, asked.params.as_deref()).await;
                        answers.insert(asked.key, answer_value(answer));
                    }
                    return Next::Resend(call.retry(
                        self.client.next_id(),
                        request,
                        &self.identity,
                        &answers,
                        state.as_deref(),
                    ));
                }
                Action::Finished(outcome) => return Next::Done(outcome),
                _ => {}
            }
        }
        Next::Read
    }

    /// The responder's answer, or a refusal when there is none.
    async fn ask(&self, method: &str, params: Option<&RawValue>) -> Result<Value, Refusal> {
        match &self.responder {
            Some(responder) => responder.answer(method, params).await,
            None => Err(Refusal::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("{method} is not supported: this client has no user to ask"),
            )),
        }
    }

    /// A transport error during the call, unless the core decides what its status means.
    fn after_error(
        &self,
        target: &Target,
        call: &mut Call,
        e: brain_mcp_transport::TransportError,
    ) -> Result<CallToolResult, StepError> {
        if let TransportKind::Status { status, rpc, .. } = e.kind()
            && call.handle_status(status.as_u16(), rpc.clone())
        {
            while let Some(action) = call.poll() {
                if let Action::Finished(outcome) = action {
                    return self
                        .finished(target, outcome)
                        .map_err(|e| exchange::with_status(e, status.as_u16()));
                }
            }
        }
        Err(StepError::Transport(e))
    }

    /// The call's outcome; a JSON-RPC error saying the 2026 framing is stale makes the
    /// client forget the server's era.
    fn finished(
        &self,
        target: &Target,
        outcome: Result<CallToolResult, CallError>,
    ) -> Result<CallToolResult, StepError> {
        outcome.map_err(|e| {
            if let CallError::Rpc {
                forget_era: true, ..
            } = &e
            {
                self.client.eras().forget(&target.key);
            }
            StepError::from(e)
        })
    }
}

/// An `input_required` round's answer as it goes into `inputResponses`: the result, or
/// the refusal as an error object.
fn answer_value(answer: Result<Value, Refusal>) -> Value {
    match answer {
        Ok(result) => result,
        Err(refusal) => json!({"error": {"code": refusal.code.0, "message": refusal.message}}),
    }
}

/// The `_meta` of a `tools/call`: `brain.dev/scope` (which tenant, session and call this
/// is) and, when the call carries a trace context, `traceparent` and `tracestate` (the
/// keys MCP reserves for W3C trace context; checked when the context was built). Each
/// value is written as JSON here, from borrowed parts.
pub(crate) fn scope(ctx: &ExecContext<'_>) -> Vec<(&'static str, Box<RawValue>)> {
    #[derive(serde::Serialize)]
    struct Scope<'a> {
        tenant_id: &'a str,
        session_id: &'a str,
        call_id: &'a str,
    }
    let call = ctx.call;
    let mut meta = Vec::with_capacity(3);
    let scope = Scope {
        tenant_id: &call.tenant,
        session_id: &call.session_id,
        call_id: &call.call_id,
    };
    // Strings only: writing them as JSON cannot fail.
    if let Ok(raw) = serde_json::value::to_raw_value(&scope) {
        meta.push((brain_mcp_proto::meta::BRAIN_SCOPE, raw));
    }
    if let Some(trace) = &call.trace {
        if let Ok(raw) = serde_json::value::to_raw_value(trace.traceparent()) {
            meta.push(("traceparent", raw));
        }
        if let Some(raw) = trace
            .tracestate()
            .and_then(|s| serde_json::value::to_raw_value(s).ok())
        {
            meta.push(("tracestate", raw));
        }
    }
    meta
}

/// Bytes a call may read: room for the result twice (a server sends structured content
/// and, as MCP asks, its JSON again as text; `max_output_bytes` counts it once) plus the
/// JSON-RPC envelope.
pub(crate) fn read_budget(max_output_bytes: usize) -> usize {
    max_output_bytes
        .saturating_mul(2)
        .saturating_add(ENVELOPE_ALLOWANCE)
}

/// Arguments of a call whose `arguments` are not an object (the input schema requires an
/// object, so this is only reached by executors run outside the pipeline).
pub(crate) static NO_ARGUMENTS: std::sync::LazyLock<Map<String, Value>> =
    std::sync::LazyLock::new(Map::new);
