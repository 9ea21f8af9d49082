//! Shared helpers for the call-path tests: bindings, running one call, and the exact
//! shapes of result events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use brain_mcp_bind::discover::{self, Request};
use brain_mcp_bind::{McpClient, McpExecutor};
use brain_tools_core::{
    Binding, HostConfig, ProgressEvent, Secret, ToolCall, ToolEvent, ToolResultEvent, run_call,
    run_call_with,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The tenant every test binding allows.
pub(crate) const TENANT: &str = "tenant-a";
/// A generous bound for effects that happen off the caller's path (cancel, DELETE).
pub(crate) const SETTLE: Duration = Duration::from_secs(20);

/// One call of the test server `url`'s `elicit` tool as `call_id`, its requests for user
/// input answered by `responder`; returns once the call's cleanups are done.
pub(crate) async fn call_elicit_with(
    url: &str,
    responder: Arc<dyn brain_mcp_bind::Responder>,
    call_id: &str,
) -> ToolResultEvent {
    let client = McpClient::new().expect("a client");
    let executor = McpExecutor::with_responder(client.clone(), responder);
    let call = ToolCall::new(TENANT, "s", call_id, json!({}));
    let bound = binding(spec("elicit", url, "elicit"));
    let result = run_call(
        &bound,
        call,
        &executor,
        &brain_tools_core::NoProgress,
        &CancellationToken::new(),
    )
    .await;
    assert!(client.flush(SETTLE).await);
    result
}

/// A client and an executor sharing it.
pub(crate) struct Harness {
    pub(crate) client: McpClient,
    pub(crate) executor: McpExecutor,
}

impl Harness {
    pub(crate) fn new() -> Self {
        let client = McpClient::new().expect("an HTTP client");
        let executor = McpExecutor::new(client.clone());
        Self { client, executor }
    }

    /// Waits for background cleanups (cancel, DELETE); they must finish.
    pub(crate) async fn flush(&self) {
        assert!(
            self.client.flush(SETTLE).await,
            "background cleanup did not finish within {SETTLE:?}"
        );
    }
}

/// What one call produced: progress events and the result, as the JSON the host sees.
pub(crate) struct Outcome {
    pub(crate) progress: Vec<Value>,
    pub(crate) result: Value,
    pub(crate) event: ToolResultEvent,
}

/// A binding's JSON: `mcp_tool` on `url`, an open object schema, 30 s timeout.
pub(crate) fn spec(name: &str, url: &str, mcp_tool: &str) -> Value {
    json!({
        "name": name,
        "description": format!("{mcp_tool} on the server under test"),
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": mcp_tool,
        "tenants": [TENANT],
        "timeout_seconds": 30,
        "max_output_bytes": 1_048_576,
    })
}

/// Loads one binding from its JSON through the host config rules.
pub(crate) fn binding(spec: Value) -> Arc<Binding> {
    let config = HostConfig::from_value(&json!({"tools": [spec]})).expect("a valid host config");
    config.tools()[0].clone()
}

/// Bindings for `tools` as discovery prints them (real schemas), loaded as a host config.
pub(crate) async fn discovered(h: &Harness, url: &str, tools: &[&str]) -> HostConfig {
    let request = Request::new(url, TENANT, tools.iter().map(|t| (*t).to_owned()).collect());
    let found = discover::discover(&h.client, &request)
        .await
        .expect("discovery of the named tools");
    let bindings = serde_json::to_value(&found.bindings).expect("bindings serialize");
    HostConfig::from_value(&json!({"tools": bindings})).expect("discovered bindings load")
}

/// Runs one call of [`TENANT`] to completion.
pub(crate) async fn call(
    h: &Harness,
    binding: &Binding,
    call_id: &str,
    args: impl Into<brain_tools_core::Arguments>,
) -> Outcome {
    call_with(h, binding, Call::new(call_id, args)).await
}

/// One call's inputs besides the binding.
pub(crate) struct Call {
    pub(crate) tenant: String,
    pub(crate) call_id: String,
    pub(crate) args: brain_tools_core::Arguments,
    pub(crate) cancel: CancellationToken,
    /// The token the lookup returns for any `token_env`; `None` reads the environment.
    pub(crate) token: Option<String>,
    /// The call's own deadline, if shorter than the binding's.
    pub(crate) timeout: Option<Duration>,
}

impl Call {
    pub(crate) fn new(call_id: &str, args: impl Into<brain_tools_core::Arguments>) -> Self {
        Self {
            tenant: TENANT.to_owned(),
            call_id: call_id.to_owned(),
            args: args.into(),
            cancel: CancellationToken::new(),
            token: None,
            timeout: None,
        }
    }
}

/// Runs one call through the pipeline, collecting its events as JSON.
pub(crate) async fn call_with(h: &Harness, binding: &Binding, call: Call) -> Outcome {
    let seen = Mutex::new(Vec::new());
    let sink = |event: ProgressEvent| {
        let value = serde_json::to_value(ToolEvent::Progress(event)).expect("progress JSON");
        seen.lock().expect("progress lock").push(value);
    };
    let mut tool_call = ToolCall::new(call.tenant, "session-1".to_owned(), call.call_id, call.args);
    if let Some(timeout) = call.timeout {
        tool_call = tool_call.with_timeout(timeout);
    }
    let event = match call.token {
        None => run_call(binding, tool_call, &h.executor, &sink, &call.cancel).await,
        Some(token) => {
            let lookup = move |_: &str| Ok(Secret::new(token.clone()));
            run_call_with(
                binding,
                tool_call,
                &h.executor,
                &sink,
                &call.cancel,
                &lookup,
            )
            .await
        }
    };
    // A number past f64's range has no `Value` (only the hostile number tests have
    // one): they read `event`, and `result` is null.
    let result = serde_json::to_value(ToolEvent::Result(event.clone())).unwrap_or(Value::Null);
    let progress = seen.into_inner().expect("progress lock");
    Outcome {
        progress,
        result,
        event,
    }
}

/// The exact JSON of a successful result.
pub(crate) fn success(call_id: &str, content: Value, structured: Option<Value>) -> Value {
    let mut v =
        json!({"type": "tool.result", "call_id": call_id, "is_error": false, "content": content});
    if let Some(s) = structured {
        v["structured_content"] = s;
    }
    v
}

/// The exact JSON of a tool's own error (`isError: true`).
pub(crate) fn tool_error(call_id: &str, content: Value) -> Value {
    json!({"type": "tool.result", "call_id": call_id, "is_error": true, "content": content,
        "unknown_outcome": false})
}

/// Asserts `result` is exactly one of Brain's failures with `kind` and `unknown_outcome`,
/// with a non-empty message; returns the message.
pub(crate) fn assert_failure(result: &Value, kind: &str, unknown_outcome: bool) -> String {
    let message = result
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let call_id = result["call_id"].clone();
    let expected = json!({"type": "tool.result", "call_id": call_id, "is_error": true,
        "content": [], "unknown_outcome": unknown_outcome,
        "error": {"kind": kind, "message": message}});
    assert_eq!(result, &expected, "expected a {kind} failure");
    assert!(!message.is_empty(), "the {kind} failure has no message");
    message
}

/// The exact JSON of a progress event.
pub(crate) fn progress(
    call_id: &str,
    value: u64,
    total: Option<u64>,
    message: Option<&str>,
) -> Value {
    let mut v = json!({"type": "tool.progress", "call_id": call_id, "progress": value});
    if let Some(t) = total {
        v["total"] = json!(t);
    }
    if let Some(m) = message {
        v["message"] = json!(m);
    }
    v
}
