//! Listing and calling tools: `x-mcp-header` filtering, `Mcp-Param-*` headers and the
//! multi-round (`input_required`) retry loop.

use brain_mcp_proto::headers::{ParamHeader, param_header_values, param_headers};
use brain_mcp_proto::mcp::InputRequiredResult;
use brain_tools_core::CompiledSchema;
use serde_json::{Map, Value, json};

use super::error::ClientError;
use super::session::Session;

/// Pages of `tools/list` followed.
const MAX_PAGES: usize = 20;
/// `input_required` rounds answered for one call before giving up.
const MAX_ROUNDS: usize = 8;

/// A tool the client may call.
#[derive(Debug, Clone)]
pub(crate) struct ListedTool {
    /// The tool's name.
    pub(crate) name: String,
    /// Its input schema, as the server sent it.
    pub(crate) input_schema: Value,
    /// Its mirrored parameters (2026 era only; empty otherwise).
    pub(crate) headers: Vec<ParamHeader>,
}

/// Lists every tool. In the 2026 era a tool whose `x-mcp-header` annotations are
/// invalid is dropped (it cannot be called correctly over HTTP), with a log line.
pub(crate) async fn list_tools(session: &mut Session) -> Result<Vec<ListedTool>, ClientError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut params = Map::new();
        if let Some(c) = cursor.take() {
            params.insert("cursor".to_owned(), Value::String(c));
        }
        let result = session.request("tools/list", params).await?;
        let listed = result
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| ClientError::protocol("tools/list", "the result has no tools array"))?;
        for tool in listed {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                eprintln!("conformance-client: skipping a tool without a name");
                continue;
            };
            let input_schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
            // Brain compiles every bound tool's schema at config load, offline: a `$ref`
            // outside the schema is an error there, never a fetch. Doing the same here
            // lets the suite's network-`$ref` canary watch Brain's own compiler.
            if let Err(e) = CompiledSchema::compile(&input_schema) {
                eprintln!("conformance-client: tool {name:?}: Brain would reject its schema: {e}");
            }
            let headers = if session.is_stateless() {
                match param_headers(&input_schema) {
                    Ok(h) => h,
                    Err(e) => {
                        eprintln!("conformance-client: dropping tool {name:?}: {e}");
                        continue;
                    }
                }
            } else {
                Vec::new()
            };
            tools.push(ListedTool {
                name: name.to_owned(),
                input_schema,
                headers,
            });
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(tools),
        }
    }
    Err(ClientError::protocol(
        "tools/list",
        format!("more than {MAX_PAGES} pages"),
    ))
}

/// Calls `tool` with `arguments`, answering `input_required` rounds through the
/// session's responder, and returns the final result.
pub(crate) async fn call_tool(
    session: &mut Session,
    tool: &ListedTool,
    arguments: Map<String, Value>,
) -> Result<Value, ClientError> {
    const METHOD: &str = "tools/call";
    let headers = param_header_values(&tool.headers, &arguments);
    let mut params = Map::new();
    params.insert("name".to_owned(), Value::String(tool.name.clone()));
    params.insert("arguments".to_owned(), Value::Object(arguments));
    for _ in 0..MAX_ROUNDS {
        let result = session
            .request_with_headers(METHOD, params.clone(), headers.clone())
            .await?;
        match result.get("resultType").and_then(Value::as_str) {
            // No resultType means complete (handshake-era servers never send one).
            None | Some("complete") => return Ok(result),
            Some("input_required") => {}
            Some(other) => {
                return Err(ClientError::protocol(
                    METHOD,
                    format!("unexpected resultType {other:?}"),
                ));
            }
        }
        let interim: InputRequiredResult = serde_json::from_value(result)
            .map_err(|e| ClientError::protocol(METHOD, format!("bad input_required: {e}")))?;
        let mut responses = Map::new();
        for (key, request) in interim.input_requests.unwrap_or_default() {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let request_params = request.get("params").cloned().unwrap_or(Value::Null);
            eprintln!(
                "conformance-client: {}: answering input {key:?} ({method})",
                tool.name
            );
            let answer = session
                .responder()
                .answer(method, &request_params)
                .map_err(|r| ClientError::protocol(METHOD, r.message))?;
            responses.insert(key, answer);
        }
        params.insert("inputResponses".to_owned(), Value::Object(responses));
        // The state is echoed exactly as received, and only when the server sent one.
        match interim.request_state {
            Some(state) => params.insert("requestState".to_owned(), Value::String(state)),
            None => params.remove("requestState"),
        };
    }
    Err(ClientError::protocol(
        METHOD,
        format!(
            "{}: still input_required after {MAX_ROUNDS} rounds",
            tool.name
        ),
    ))
}

/// Plausible arguments for a tool nobody told us how to call: every property with a
/// `default` or a simple type gets a value.
pub(crate) fn sample_arguments(schema: &Value) -> Map<String, Value> {
    let mut args = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return args;
    };
    for (name, property) in properties {
        let value = if let Some(d) = property.get("default") {
            d.clone()
        } else if let Some(first) = property
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            first.clone()
        } else {
            match property.get("type").and_then(Value::as_str) {
                Some("string") => json!("sample"),
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                _ => continue,
            }
        };
        args.insert(name.clone(), value);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_arguments_cover_simple_types() {
        let schema = json!({"properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},
            "mode":{"type":"string","enum":["fast","slow"]},
            "d":{"type":"string","default":"x"},
            "o":{"type":"object"}
        }});
        assert_eq!(
            Value::Object(sample_arguments(&schema)),
            json!({"region":"sample","n":1,"f":1.5,"b":true,"mode":"fast","d":"x"})
        );
    }
}
