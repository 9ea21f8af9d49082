//! Turning a managed server's listing and the application's [`ToolSpec`]s into bindings,
//! by the rules `mcp-tools` follows (`crate::bindings`, shared with discovery): the
//! listing already left out what the core says may not be offered, a missing name is
//! reported with the reason it was hidden or the close names, a remote name becomes a
//! valid binding name distinct from the others, and every binding is loaded by the host
//! config's own loader (so every config rule holds).

use std::sync::Arc;

use brain_mcp_proto::mcp::Tool;
use brain_tools_core::{Binding, HostConfig};
use serde_json::{Map, Value, json};

use brain_mcp_transport::Secrets;

use super::error::{HostError, HostErrorKind};
use super::managed::ToolSpec;
use crate::bindings;
use crate::discover::{DEFAULT_TIMEOUT_SECONDS, Listed};

/// Default `max_output_bytes`, as `mcp-tools` prints it.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize =
    crate::discover::DEFAULT_MAX_OUTPUT_BYTES as usize;

/// One selected tool: its binding and its name on the server.
pub(crate) struct Selected {
    pub(crate) binding: Arc<Binding>,
    pub(crate) remote: String,
}

/// Where the bindings of a managed server send their calls: the endpoint and extra
/// headers of an HTTP server (MCP bindings), or nothing for stdio (bindings the host runs
/// itself).
pub(crate) struct Endpoint<'a> {
    pub(crate) url: &'a str,
    pub(crate) headers: &'a [(String, String)],
}

/// The bindings of `specs` from `listed` (the server's listing, as offered), and notes
/// for the operator (tools bound under a name of our making); strings the server wrote
/// have `secrets` removed.
pub(crate) fn select(
    server: &str,
    listed: &Listed,
    specs: &[ToolSpec],
    endpoint: Option<Endpoint<'_>>,
    secrets: &Secrets,
) -> Result<(Vec<Selected>, Vec<String>), HostError> {
    let invalid = |message: String| HostError::new(HostErrorKind::Invalid, message);
    if specs.is_empty() {
        return Err(invalid(format!("server {server:?} names no tool to serve")));
    }
    let tools = &listed.tools;
    let found: Vec<Option<&Tool>> = specs
        .iter()
        .map(|spec| tools.iter().find(|t| t.name == spec.remote))
        .collect();
    let missing: Vec<&str> = specs
        .iter()
        .zip(&found)
        .filter(|(_, tool)| tool.is_none())
        .map(|(spec, _)| spec.remote.as_str())
        .collect();
    if !missing.is_empty() {
        let offered = tools.iter().map(|t| t.name.as_str());
        let lines = bindings::missing(&missing, offered, &listed.hidden, None);
        let message = format!("server {server:?} has no tool named {lines}");
        let message = secrets.redact(&message).into_owned();
        return Err(HostError::new(HostErrorKind::Missing, message));
    }
    let wanted: Vec<(&str, Option<&str>)> = specs
        .iter()
        .map(|spec| (spec.remote.as_str(), spec.name.as_deref()))
        .collect();
    let (names, notes) = bindings::names(&wanted);
    let specs_json: Vec<Value> = specs
        .iter()
        .zip(found.into_iter().flatten())
        .zip(&names)
        .map(|((spec, tool), name)| binding_json(tool, spec, name, endpoint.as_ref(), secrets))
        .collect();
    let config = HostConfig::from_value(&json!({ "tools": specs_json })).map_err(|errors| {
        let message = format!("the tools of server {server:?} do not load as bindings: {errors}");
        invalid(secrets.redact(&message).into_owned())
    })?;
    let selected = config
        .tools()
        .iter()
        .zip(specs)
        .map(|(binding, spec)| Selected {
            binding: binding.clone(),
            remote: spec.remote.clone(),
        })
        .collect();
    let notes = notes
        .iter()
        .map(|n| secrets.redact(n).into_owned())
        .collect();
    Ok((selected, notes))
}

fn binding_json(
    tool: &Tool,
    spec: &ToolSpec,
    name: &str,
    endpoint: Option<&Endpoint<'_>>,
    secrets: &Secrets,
) -> Value {
    let mut description = Value::String(tool.description.clone().unwrap_or_default());
    let mut input_schema = tool.input_schema_value().unwrap_or(Value::Null);
    secrets.redact_value(&mut description);
    secrets.redact_value(&mut input_schema);
    let mut binding = Map::new();
    binding.insert("name".into(), json!(name));
    binding.insert("description".into(), description);
    binding.insert("input_schema".into(), input_schema);
    if let Some(endpoint) = endpoint {
        binding.insert("url".into(), json!(endpoint.url));
        binding.insert("mcp_tool".into(), json!(tool.name));
        if let Some(support) = tool.task_support() {
            binding.insert("task_support".into(), json!(support));
        }
        if !endpoint.headers.is_empty() {
            let headers: Map<String, Value> = endpoint
                .headers
                .iter()
                .map(|(name, value)| (name.to_ascii_lowercase(), json!(value)))
                .collect();
            binding.insert("headers".into(), Value::Object(headers));
        }
    }
    binding.insert("tenants".into(), json!(spec.tenants));
    let timeout = spec.timeout.map_or(DEFAULT_TIMEOUT_SECONDS, |t| {
        t.as_secs() + u64::from(t.subsec_nanos() > 0)
    });
    binding.insert("timeout_seconds".into(), json!(timeout));
    binding.insert(
        "max_output_bytes".into(),
        json!(spec.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)),
    );
    if let Some(Ok(mut schema)) = tool
        .output_schema
        .as_ref()
        .map(|s| serde_json::from_str::<Value>(s.get()))
    {
        secrets.redact_value(&mut schema);
        binding.insert("output_schema".into(), schema);
    }
    Value::Object(binding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::managed::ToolSpec;

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(json!({"name": name, "description": "d", "inputSchema": schema}))
            .expect("a tool")
    }

    fn none() -> Secrets {
        Secrets::none()
    }

    fn listed(tools: Vec<Tool>, hidden: &[(&str, &str)]) -> Listed {
        Listed {
            tools,
            warnings: Vec::new(),
            era: brain_mcp_proto::client::Era::Handshake,
            hidden: hidden
                .iter()
                .map(|(n, w)| ((*n).to_owned(), (*w).to_owned()))
                .collect(),
        }
    }

    fn http() -> Option<Endpoint<'static>> {
        Some(Endpoint {
            url: "http://h/mcp",
            headers: &[],
        })
    }

    #[test]
    fn named_tools_become_bindings_that_load() {
        let tools = listed(
            vec![
                tool("get weather", json!({"type": "object"})),
                tool(
                    "echo",
                    json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                ),
            ],
            &[],
        );
        let specs = [
            ToolSpec::new("get weather", ["t1"]),
            ToolSpec::new("echo", ["t1", "t2"])
                .rename("say")
                .timeout(std::time::Duration::from_millis(1500))
                .max_output_bytes(10),
        ];
        let (got, notes) = select("s", &tools, &specs, None, &none()).expect("loads");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(got[0].binding.name(), "get_weather");
        assert_eq!(got[0].remote, "get weather");
        assert!(!got[0].binding.is_mcp(), "a stdio binding has no URL");
        assert_eq!(got[1].binding.name(), "say");
        assert_eq!(got[1].binding.timeout().as_secs(), 2, "rounded up");
        assert_eq!(got[1].binding.max_output_bytes(), 10);
        assert!(got[1].binding.allows_tenant("t2"));
        let (http, _) = select("s", &tools, &specs[..1], http(), &none()).expect("loads");
        assert_eq!(http[0].binding.mcp().map(|m| m.tool()), Some("get weather"));
    }

    #[test]
    fn missing_tools_are_named_with_close_names_or_why_they_are_hidden() {
        let tools = listed(
            vec![tool("echo", json!({"type": "object"}))],
            &[("bad", "not a string")],
        );
        let err = select("s", &tools, &[ToolSpec::new("ecko", ["t"])], None, &none())
            .err()
            .expect("missing");
        assert_eq!(err.kind(), HostErrorKind::Missing);
        assert!(
            err.to_string()
                .contains("\"ecko\" (did you mean \"echo\"?)"),
            "{err}"
        );
        let err = select("s", &tools, &[ToolSpec::new("bad", ["t"])], None, &none())
            .err()
            .expect("hidden");
        assert!(
            err.to_string()
                .contains("\"bad\" (not offered: invalid x-mcp-header annotation: not a string)"),
            "{err}"
        );
        // The config's rules hold: an invalid name is refused by the loader.
        let spec = [ToolSpec::new("echo", ["t"]).rename("no spaces allowed")];
        let err = select("s", &tools, &spec, None, &none())
            .err()
            .expect("invalid");
        assert_eq!(err.kind(), HostErrorKind::Invalid, "{err}");
    }

    #[test]
    fn tools_whose_names_meet_get_distinct_bindings() {
        let tools = listed(
            vec![
                tool("a.b", json!({"type": "object"})),
                tool("a_b", json!({"type": "object"})),
            ],
            &[],
        );
        let specs = [ToolSpec::new("a.b", ["t"]), ToolSpec::new("a_b", ["t"])];
        let (got, notes) = select("s", &tools, &specs, None, &none()).expect("loads");
        let names: Vec<&str> = got.iter().map(|s| s.binding.name()).collect();
        assert_eq!(names, ["a_b", "a_b_2"]);
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
