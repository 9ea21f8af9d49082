//! What the client does for each conformance scenario.

use brain_mcp_proto::mcp::{ClientCapabilities, ElicitationCapability};
use brain_mcp_proto::version::ProtocolVersion;
use serde_json::{Map, Value, json};

use super::error::ClientError;
use super::responder::DefaultsResponder;
use super::session::Session;
use super::tools::{ListedTool, call_tool, list_tools, sample_arguments};

/// What the runner told us.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub(crate) scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`, parsed (unknown values mean the newest).
    pub(crate) version: ProtocolVersion,
    /// `MCP_CONFORMANCE_CONTEXT`, parsed (`null` when unset).
    pub(crate) context: Value,
    /// The server URL (the last argument).
    pub(crate) url: String,
}

/// Runs the scenario named in `run`.
pub(crate) async fn run(run: &Run) -> Result<(), ClientError> {
    let wants_input = matches!(
        run.scenario.as_str(),
        "elicitation-sep1034-client-defaults" | "sep-2322-client-request-state"
    );
    let mut session = connect(run, wants_input).await?;
    let outcome = drive(run, &mut session).await;
    session.close().await;
    outcome
}

/// Opens the lifecycle the run's protocol version calls for.
async fn connect(run: &Run, wants_input: bool) -> Result<Session, ClientError> {
    let capabilities = ClientCapabilities {
        elicitation: wants_input.then(ElicitationCapability::default),
        ..ClientCapabilities::default()
    };
    let responder = Box::new(DefaultsResponder);
    if run.version.is_stateless() {
        Session::stateless(&run.url, capabilities, responder)
    } else {
        Session::handshake(&run.url, run.version, capabilities, responder).await
    }
}

async fn drive(run: &Run, session: &mut Session) -> Result<(), ClientError> {
    match run.scenario.as_str() {
        "tools_call" => {
            let tools = list_tools(session).await?;
            let add = find(&tools, "add_numbers")?;
            let args = object(json!({"a": 2, "b": 3}));
            log_result(&add.name, &call_tool(session, add, args).await?);
        }
        "http-custom-headers" => replay_context_calls(run, session).await?,
        "http-standard-headers" => {
            call_every_tool(session).await?;
            read_every_resource(session).await?;
            get_every_prompt(session).await?;
        }
        "json-schema-2020-12-preservation" => {
            let tools = list_tools(session).await?;
            let focal = find(&tools, "json_schema_2020_12_tool")?;
            let echo = find(&tools, "json_schema_echo")?;
            let args = object(json!({"schema": focal.input_schema}));
            log_result(&echo.name, &call_tool(session, echo, args).await?);
        }
        // Listing is the whole point of these (the schema's network `$ref` must never
        // be fetched: this client keeps schemas as opaque JSON).
        "initialize" | "json-schema-ref-no-deref" => {
            list_tools(session).await?;
        }
        // sse-retry, request-metadata, sep-2322-client-request-state,
        // http-invalid-tool-headers, elicitation-sep1034-client-defaults and any new
        // scenario: list the usable tools and call each one.
        _ => call_every_tool(session).await?,
    }
    Ok(())
}

fn find<'a>(tools: &'a [ListedTool], name: &str) -> Result<&'a ListedTool, ClientError> {
    tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| ClientError::protocol("tools/list", format!("no tool named {name:?}")))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn log_result(tool: &str, result: &Value) {
    let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
    let shown = result.to_string();
    let shown: String = shown.chars().take(300).collect();
    eprintln!("conformance-client: {tool}: isError={failed} {shown}");
}

async fn call_every_tool(session: &mut Session) -> Result<(), ClientError> {
    let tools = list_tools(session).await?;
    for tool in &tools {
        let args = sample_arguments(&tool.input_schema);
        log_result(&tool.name, &call_tool(session, tool, args).await?);
    }
    Ok(())
}

/// `http-custom-headers`: the context lists the calls to make, argument for argument.
async fn replay_context_calls(run: &Run, session: &mut Session) -> Result<(), ClientError> {
    let tools = list_tools(session).await?;
    let calls = run
        .context
        .get("toolCalls")
        .and_then(Value::as_array)
        .ok_or_else(|| ClientError::Usage("MCP_CONFORMANCE_CONTEXT has no toolCalls".into()))?;
    for call in calls {
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let args = object(call.get("arguments").cloned().unwrap_or(json!({})));
        let tool = find(&tools, name)?;
        log_result(name, &call_tool(session, tool, args).await?);
    }
    Ok(())
}

async fn read_every_resource(session: &mut Session) -> Result<(), ClientError> {
    let listed = session.request("resources/list", Map::new()).await?;
    let uris: Vec<String> = listed
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
        .collect();
    for uri in uris {
        let params = object(json!({"uri": uri}));
        session.request("resources/read", params).await?;
    }
    Ok(())
}

async fn get_every_prompt(session: &mut Session) -> Result<(), ClientError> {
    let listed = session.request("prompts/list", Map::new()).await?;
    let prompts: Vec<Value> = listed
        .get("prompts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for prompt in prompts {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut arguments = Map::new();
        for arg in prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(arg_name) = arg.get("name").and_then(Value::as_str) {
                arguments.insert(arg_name.to_owned(), json!("sample"));
            }
        }
        let params = object(json!({"name": name, "arguments": arguments}));
        session.request("prompts/get", params).await?;
    }
    Ok(())
}
