//! The executor behind MCP bindings: one `tools/call`, in whichever era the server speaks.

use async_trait::async_trait;
use brain_mcp_proto::headers::{param_header_values, param_headers};
use brain_mcp_proto::jsonrpc::{self, ErrorCode, Incoming, Message, RequestId};
use brain_mcp_proto::mcp::{ClientCapabilities, ProgressParams, RequestMeta, methods, parse};
use brain_mcp_proto::meta::{BRAIN_SCOPE, RequestMetaBuilder};
use brain_mcp_proto::text::FRAGMENT_LIMIT;
use brain_mcp_proto::version::ProtocolVersion;
use brain_mcp_transport::{BearerToken, ErrorKind as TransportErrorKind, Expect, PostReply};
use brain_tools_core::{
    ErrorKind, ExecContext, ProgressReporter, ToolExecutor, ToolFailure, ToolOutput,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::client::{McpClient, Target};
use crate::era::Era;
use crate::exchange::{self, Outgoing, StepError, Wire};
use crate::{convert, failure, probe, redact};

/// Extra room in a call's read budget over twice `max_output_bytes`, for the JSON-RPC
/// envelope and progress notifications; the exact limit is applied to the converted output.
pub const ENVELOPE_ALLOWANCE: usize = 64 * 1024;

/// Runs MCP bindings. Share one per process: it holds the connection pool and era cache.
#[derive(Clone, Debug)]
pub struct McpExecutor {
    client: McpClient,
}

impl McpExecutor {
    /// An executor using `client`.
    pub fn new(client: McpClient) -> Self {
        Self { client }
    }

    /// The shared client (for [`McpClient::flush`] before exit).
    pub fn client(&self) -> &McpClient {
        &self.client
    }
}

#[async_trait]
impl ToolExecutor for McpExecutor {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        let binding = ctx.binding;
        let bearer = ctx.token.as_ref().map(|t| BearerToken::new(t.expose()));
        let (Some(url), Some(tool)) = (binding.url.as_deref(), binding.mcp_tool.as_deref()) else {
            return Err(ToolFailure::before_send(
                ErrorKind::ConnectFailed,
                format!(
                    "binding {:?} is not an MCP binding (url and mcp_tool are required)",
                    binding.name
                ),
            ));
        };
        let target = Target::new(url, bearer)
            .map_err(|m| ToolFailure::before_send(ErrorKind::ConnectFailed, m))?;
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
        let era = probe::era_of(&self.client, target)
            .await
            .map_err(|e| failure::before_call(target, e))?;
        let call = CallSpec {
            tool,
            arguments: ctx.call.arguments.as_object().unwrap_or(&NO_ARGUMENTS),
            token: RequestId::String(ctx.call.call_id.clone()),
            scope: json!({
                "tenant_id": ctx.call.tenant,
                "session_id": ctx.call.session_id,
                "call_id": ctx.call.call_id,
            }),
            budget: read_budget(binding.max_output_bytes),
            input_schema: &binding.input_schema,
        };
        match era {
            Era::Handshake => self.call_in_session(target, call, ctx).await,
            Era::Stateless(version) => self.call_stateless(target, version, call, ctx).await,
        }
    }
}

/// Bytes a call may read: room for the result twice (a server sends structured content
/// and, as MCP asks, its JSON again as text; `max_output_bytes` counts it once) plus the
/// JSON-RPC envelope and the messages before it.
fn read_budget(max_output_bytes: usize) -> usize {
    max_output_bytes
        .saturating_mul(2)
        .saturating_add(ENVELOPE_ALLOWANCE)
}

/// What one call sends.
struct CallSpec<'a> {
    tool: &'a str,
    arguments: &'a Map<String, Value>,
    token: RequestId,
    scope: Value,
    budget: usize,
    input_schema: &'a Value,
}

impl McpExecutor {
    async fn call_in_session(
        &self,
        target: &Target,
        call: CallSpec<'_>,
        ctx: &ExecContext<'_>,
    ) -> Result<ToolOutput, ToolFailure> {
        let mut session = probe::open_session(&self.client, target)
            .await
            .map_err(|e| failure::before_call(target, e))?;
        let mut meta = RequestMeta {
            progress_token: Some(call.token.clone()),
            ..RequestMeta::default()
        };
        // The scope is built for this call only: moved into `_meta`, not copied.
        meta.extra.insert(BRAIN_SCOPE.to_owned(), call.scope);
        let id = self.client.next_id();
        let body = encode_call(&id, call.tool, call.arguments, &meta)?;
        let headers = exchange::headers(
            target,
            session.wire(),
            methods::TOOLS_CALL,
            None,
            Vec::new(),
        );
        ctx.mark_sent();
        session.set_in_flight(Some(id.clone()));
        let reply = exchange::post(
            &self.client,
            target,
            session.wire(),
            Outgoing {
                headers,
                body,
                expect: Expect::Response(id.clone()),
                budget: call.budget,
                idempotent: false,
            },
        )
        .await;
        let answer = match reply {
            Ok(reply) => {
                self.read_call(target, session.wire(), reply, ctx.progress, &call.token)
                    .await
            }
            Err(e) => Err(StepError::Transport(e)),
        };
        if answered(&answer) {
            session.set_in_flight(None);
        }
        drop(session);
        finish(target, Era::Handshake, answer)
    }

    async fn call_stateless(
        &self,
        target: &Target,
        version: ProtocolVersion,
        call: CallSpec<'_>,
        ctx: &ExecContext<'_>,
    ) -> Result<ToolOutput, ToolFailure> {
        let meta = RequestMetaBuilder::new(version, ClientCapabilities::default())
            .client_info(self.client.info().clone())
            .progress_token(call.token.clone())
            .extra(BRAIN_SCOPE, call.scope)
            .build();
        let params = param_headers(call.input_schema)
            .map(|found| param_header_values(&found, call.arguments))
            .unwrap_or_default();
        let id = self.client.next_id();
        let body = encode_call(&id, call.tool, call.arguments, &meta)?;
        let wire = Wire::Stateless(version);
        let headers = exchange::headers(target, wire, methods::TOOLS_CALL, Some(call.tool), params);
        ctx.mark_sent();
        let reply = exchange::post(
            &self.client,
            target,
            wire,
            Outgoing {
                headers,
                body,
                expect: Expect::Response(id),
                budget: call.budget,
                idempotent: false,
            },
        )
        .await;
        let answer = match reply {
            Ok(reply) => {
                self.read_call(target, wire, reply, ctx.progress, &call.token)
                    .await
            }
            Err(e) => Err(StepError::Transport(e)),
        };
        if rpc_code(&answer).is_some_and(probe::invalidates_era) {
            self.client.eras().forget(&target.key);
        }
        finish(target, Era::Stateless(version), answer)
    }

    /// Reads a `tools/call` reply to its response: progress becomes events, pings are
    /// answered, and a request for user input is refused and fails the call.
    async fn read_call(
        &self,
        target: &Target,
        wire: Wire<'_>,
        reply: PostReply,
        progress: &ProgressReporter<'_>,
        token: &RequestId,
    ) -> Result<Box<RawValue>, StepError> {
        let PostReply::Stream(mut stream) = reply else {
            return Err(StepError::Protocol(
                "the server accepted tools/call without answering it".into(),
            ));
        };
        loop {
            let inbound = exchange::next(&mut stream).await?;
            if inbound.is_final_response {
                return exchange::final_result(&inbound);
            }
            match jsonrpc::decode(inbound.text.as_bytes()) {
                Ok(Incoming::Single(Message::Notification(n))) if n.method == methods::PROGRESS => {
                    report_progress(target, n.params, progress, token);
                }
                Ok(Incoming::Single(Message::Request(r))) => {
                    let method = r.method.into_owned();
                    exchange::respond_refusal(&self.client, target, wire, &r.id, &method).await;
                    if asks_for_user_input(&method) {
                        drop(stream);
                        return Err(StepError::UserInput(format!(
                            "the server sent {method}: it needs user input Brain cannot give"
                        )));
                    }
                    // A 2026 client cannot answer a request (there are no client responses
                    // in that era), so waiting would only run the call into its timeout.
                    if let Wire::Stateless(version) = wire {
                        drop(stream);
                        return Err(StepError::Protocol(format!(
                            "the server sent a {method} request during a {version} call, \
                             where servers send no requests"
                        )));
                    }
                }
                // Logging and other notifications, and responses to other ids, are not ours.
                _ => {}
            }
        }
    }
}

fn asks_for_user_input(method: &str) -> bool {
    matches!(
        method,
        methods::ELICITATION_CREATE | methods::SAMPLING_CREATE_MESSAGE | methods::ROOTS_LIST
    )
}

/// Reports one progress notification for our token; its message is cut to
/// [`FRAGMENT_LIMIT`] bytes and loses the token.
fn report_progress(
    target: &Target,
    params: Option<&RawValue>,
    progress: &ProgressReporter<'_>,
    token: &RequestId,
) {
    let Some(params) = params else { return };
    let Ok(p) = parse::<ProgressParams>(params) else {
        return;
    };
    if &p.progress_token != token {
        return;
    }
    let (Some(value), total) = (number(p.progress), p.total.and_then(number)) else {
        return;
    };
    let message = p.message.map(|m| failure::safe(target, &m, FRAGMENT_LIMIT));
    progress.report(value, total, message);
}

/// A JSON number for a progress value: integral values stay integers (`1`, not `1.0`).
fn number(v: f64) -> Option<serde_json::Number> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(serde_json::Number::from(v as i64));
    }
    serde_json::Number::from_f64(v)
}

/// Arguments of a call whose `arguments` are not an object (the input schema requires an
/// object, so this is only reached by executors run outside the pipeline).
static NO_ARGUMENTS: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// `tools/call` params borrowing the call's arguments (they can be large; no copy).
#[derive(serde::Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    #[serde(rename = "_meta")]
    meta: &'a RequestMeta,
}

fn encode_call(
    id: &RequestId,
    tool: &str,
    arguments: &Map<String, Value>,
    meta: &RequestMeta,
) -> Result<Vec<u8>, ToolFailure> {
    let params = CallParams {
        name: tool,
        arguments,
        meta,
    };
    jsonrpc::encode_request(id, methods::TOOLS_CALL, &params).map_err(|e| {
        ToolFailure::before_send(
            ErrorKind::ProtocolError,
            format!("could not encode tools/call: {e}"),
        )
    })
}

/// The JSON-RPC error code of a failed answer, whether it came in a 2xx body or with an
/// error status (2026 servers answer -32022 and -32020 with HTTP 400).
fn rpc_code(answer: &Result<Box<RawValue>, StepError>) -> Option<ErrorCode> {
    match answer {
        Err(StepError::Rpc { code, .. }) => Some(*code),
        Err(StepError::Transport(e)) => match e.kind() {
            TransportErrorKind::Status {
                rpc: Some((code, _)),
                ..
            } => Some(*code),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the server gave a definite answer (result or JSON-RPC error) to the call.
fn answered(answer: &Result<Box<RawValue>, StepError>) -> bool {
    matches!(answer, Ok(_) | Err(StepError::Rpc { .. }))
}

fn finish(
    target: &Target,
    era: Era,
    answer: Result<Box<RawValue>, StepError>,
) -> Result<ToolOutput, ToolFailure> {
    answer
        .and_then(|raw| convert::convert(&raw, era))
        .map_err(|e| failure::during_call(target, e))
}
