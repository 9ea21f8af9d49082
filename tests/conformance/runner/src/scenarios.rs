//! What the runner does for each conformance scenario, through Brain's own path:
//! `discover::list` for listing, `run_call` with `McpExecutor` for calls.

use std::sync::Arc;
use std::time::Duration;

use brain_mcp_bind::discover::{self, Listed};
use brain_mcp_bind::{McpClient, McpExecutor, OAuthClient};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_proto::version::ProtocolVersion;
use brain_tools_core::{Binding, NoProgress, ToolCall, run_call};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::user::DefaultsResponder;
use crate::{arguments, auth};

/// The bound on listing and on each call.
const DEADLINE: Duration = Duration::from_secs(20);

/// What the suite's runner asked for.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub(crate) scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`, parsed (unknown values mean the newest).
    pub(crate) version: ProtocolVersion,
    /// `MCP_CONFORMANCE_CONTEXT`, parsed (`null` when unset).
    pub(crate) context: Value,
    /// The server URL.
    pub(crate) url: String,
}

/// Runs the scenario named in `run`.
pub(crate) async fn run(run: &Run) -> Result<(), String> {
    let client = McpClient::new().map_err(|e| format!("cannot set up HTTP: {e}"))?;
    // Scenarios that ask for user input get the stand-in user; Brain's bindings have none.
    let executor = if matches!(
        run.scenario.as_str(),
        "elicitation-sep1034-client-defaults" | "sep-2322-client-request-state"
    ) {
        McpExecutor::with_responder(client.clone(), Arc::new(DefaultsResponder))
    } else {
        McpExecutor::new(client.clone())
    };
    let oauth = auth::client(run)?;
    if let Some(oauth) = &oauth {
        executor.set_credentials(Some(auth::source(oauth.clone())));
    }
    let outcome = drive(run, &client, &executor, oauth.as_ref()).await;
    client.flush(Duration::from_secs(5)).await;
    outcome
}

async fn drive(
    run: &Run,
    client: &McpClient,
    executor: &McpExecutor,
    oauth: Option<&OAuthClient>,
) -> Result<(), String> {
    let tools = list(run, client, oauth).await?;
    match run.scenario.as_str() {
        "tools_call" => {
            let add = find(&tools, "add_numbers")?;
            call(run, executor, add, object(json!({"a": 2, "b": 3}))).await
        }
        "http-custom-headers" => {
            let calls = run
                .context
                .get("toolCalls")
                .and_then(Value::as_array)
                .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
            for asked in calls {
                let name = asked
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let args = object(asked.get("arguments").cloned().unwrap_or(json!({})));
                call(run, executor, find(&tools, name)?, args).await?;
            }
            Ok(())
        }
        "json-schema-2020-12-preservation" => {
            let focal = find(&tools, "json_schema_2020_12_tool")?;
            let echo = find(&tools, "json_schema_echo")?;
            let schema: Value = serde_json::from_str(focal.input_schema.get())
                .map_err(|e| format!("the focal tool's schema: {e}"))?;
            call(run, executor, echo, object(json!({"schema": schema}))).await
        }
        // Listing is the whole point of these (a schema's network `$ref` must never be
        // fetched: Brain compiles schemas offline and refuses such a binding).
        "initialize" | "json-schema-ref-no-deref" => {
            for tool in &tools {
                if let Err(why) = binding(run, tool) {
                    eprintln!("conformance-client: {} cannot be bound: {why}", tool.name);
                }
            }
            Ok(())
        }
        // sse-retry, request-metadata, sep-2322-client-request-state, elicitation
        // defaults, http-standard-headers, http-invalid-tool-headers and any new scenario:
        // call every tool Brain can bind.
        _ => {
            for tool in &tools {
                let args = arguments::sample(
                    &serde_json::from_str(tool.input_schema.get()).unwrap_or(Value::Null),
                );
                call(run, executor, tool, args).await?;
            }
            Ok(())
        }
    }
}

/// Every tool, by Brain's discovery. A refused first listing is tried once more: a server
/// that refuses a stale framing (-32022) makes the client forget the era, and the next
/// listing probes again.
async fn list(
    run: &Run,
    client: &McpClient,
    oauth: Option<&OAuthClient>,
) -> Result<Vec<Tool>, String> {
    let once = || async {
        match oauth {
            Some(oauth) => discover::list_oauth(client, &run.url, oauth, DEADLINE).await,
            None => discover::list(client, &run.url, None, DEADLINE).await,
        }
    };
    let listed: Listed = match once().await {
        Ok(listed) => listed,
        Err(first) => {
            eprintln!("conformance-client: listing failed once: {first}");
            once().await.map_err(|e| format!("listing tools: {e}"))?
        }
    };
    for warning in &listed.warnings {
        eprintln!("conformance-client: {warning}");
    }
    eprintln!(
        "conformance-client: {} tools in the {} era",
        listed.tools.len(),
        listed.era.describe()
    );
    Ok(listed.tools)
}

/// The binding Brain would load for `tool`.
fn binding(run: &Run, tool: &Tool) -> Result<Binding, String> {
    let schema: Value = serde_json::from_str(tool.input_schema.get()).map_err(|e| e.to_string())?;
    let spec = json!({
        "name": "conformance_tool",
        "description": tool.description.clone().unwrap_or_default(),
        "input_schema": schema,
        "url": run.url,
        "mcp_tool": tool.name,
        "tenants": ["conformance"],
        "timeout_seconds": DEADLINE.as_secs(),
        "max_output_bytes": 16 * 1024 * 1024,
    });
    Binding::from_value(&spec).map_err(|e| e.to_string().replace('\n', "; "))
}

/// Calls `tool` through Brain's pipeline; a Brain failure (not the tool's own error) fails
/// the scenario step.
async fn call(
    run: &Run,
    executor: &McpExecutor,
    tool: &Tool,
    arguments: Map<String, Value>,
) -> Result<(), String> {
    let binding =
        binding(run, tool).map_err(|why| format!("{} cannot be bound: {why}", tool.name))?;
    let call = ToolCall::new(
        "conformance",
        "conformance-session",
        format!("call-{}", tool.name),
        Value::Object(arguments),
    );
    let result = run_call(
        &binding,
        call,
        executor,
        &NoProgress,
        &CancellationToken::new(),
    )
    .await;
    let shown: String = serde_json::to_string(&result)
        .unwrap_or_default()
        .chars()
        .take(300)
        .collect();
    eprintln!("conformance-client: {}: {shown}", tool.name);
    match &result.error {
        Some(error) => Err(format!(
            "{}: {}: {}",
            tool.name,
            error.kind.as_str(),
            error.message
        )),
        None => Ok(()),
    }
}

fn find<'a>(tools: &'a [Tool], name: &str) -> Result<&'a Tool, String> {
    tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("the server lists no tool named {name:?}"))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
