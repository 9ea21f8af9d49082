//! Turning a managed server's listing and the application's [`ToolSpec`]s into bindings,
//! by the rules `mcp-tools` follows: tools with invalid `x-mcp-header` annotations are not
//! offered in the 2026 era, a missing name is reported with close names, a remote name
//! becomes a valid binding name, and every binding is loaded by the host config's own
//! loader (so every config rule holds).

use std::sync::Arc;

use brain_mcp_proto::client::Era;
use brain_mcp_proto::headers::param_headers;
use brain_mcp_proto::mcp::Tool;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};
use brain_tools_core::{Binding, HostConfig};
use serde_json::{Map, Value, json};

use super::HostError;
use super::managed::ToolSpec;
use crate::client::Target;
use crate::discover::{DEFAULT_TIMEOUT_SECONDS, model_name};
use crate::{redact, text};

/// Default `max_output_bytes`, as `mcp-tools` prints it.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize =
    crate::discover::DEFAULT_MAX_OUTPUT_BYTES as usize;

/// One selected tool: its binding and its name on the server.
pub(crate) struct Selected {
    pub(crate) binding: Arc<Binding>,
    pub(crate) remote: String,
}

/// The bindings of `specs` from `tools`; `url` is the endpoint of an HTTP server (an
/// MCP binding), `None` for stdio (a binding the host runs itself). Strings the server
/// wrote have `target`'s token removed.
pub(crate) fn select(
    server: &str,
    era: Era,
    tools: &[Tool],
    specs: &[ToolSpec],
    url: Option<&str>,
    target: &Target,
) -> Result<Vec<Selected>, HostError> {
    if specs.is_empty() {
        return Err(HostError::Invalid(format!(
            "server {server:?} names no tool to serve"
        )));
    }
    let offered = |tool: &&Tool| match era {
        Era::Stateless(_) => tool
            .input_schema_value()
            .map(|schema| param_headers(&schema).is_ok())
            .unwrap_or(false),
        _ => true,
    };
    let mut missing = Vec::new();
    let mut specs_json = Vec::new();
    for spec in specs {
        let Some(tool) = tools.iter().filter(offered).find(|t| t.name == spec.remote) else {
            let close =
                text::close_matches(&spec.remote, tools.iter().map(|t| t.name.as_str()), None);
            missing.push(if close.is_empty() {
                format!("{:?}", cut(&spec.remote, FRAGMENT_LIMIT))
            } else {
                let close: Vec<String> = close
                    .iter()
                    .map(|c| format!("{:?}", cut(c, FRAGMENT_LIMIT)))
                    .collect();
                format!(
                    "{:?} (did you mean {}?)",
                    cut(&spec.remote, FRAGMENT_LIMIT),
                    close.join(" or ")
                )
            });
            continue;
        };
        specs_json.push(binding_json(tool, spec, url, target));
    }
    if !missing.is_empty() {
        let message = format!("server {server:?} has no tool named {}", missing.join(", "));
        return Err(HostError::Missing(target.redact(&message).into_owned()));
    }
    let config = HostConfig::from_value(&json!({ "tools": specs_json })).map_err(|errors| {
        let message = format!("the tools of server {server:?} do not load as bindings: {errors}");
        HostError::Invalid(target.redact(&message).into_owned())
    })?;
    Ok(config
        .tools()
        .iter()
        .zip(specs)
        .map(|(binding, spec)| Selected {
            binding: binding.clone(),
            remote: spec.remote.clone(),
        })
        .collect())
}

fn binding_json(tool: &Tool, spec: &ToolSpec, url: Option<&str>, target: &Target) -> Value {
    let mut description = Value::String(tool.description.clone().unwrap_or_default());
    let mut input_schema = tool.input_schema_value().unwrap_or(Value::Null);
    redact::value_in_place(target, &mut description);
    redact::value_in_place(target, &mut input_schema);
    let mut binding = Map::new();
    binding.insert(
        "name".into(),
        json!(spec.name.clone().unwrap_or_else(|| model_name(&tool.name))),
    );
    binding.insert("description".into(), description);
    binding.insert("input_schema".into(), input_schema);
    if let Some(url) = url {
        binding.insert("url".into(), json!(url));
        binding.insert("mcp_tool".into(), json!(tool.name));
        if !target.headers.is_empty() {
            let headers: Map<String, Value> = target
                .headers
                .iter()
                .map(|h| (h.name.to_string(), json!(h.value)))
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
        redact::value_in_place(target, &mut schema);
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

    fn target() -> Target {
        Target::new("http://h/mcp", None).expect("url")
    }

    #[test]
    fn named_tools_become_bindings_that_load() {
        let tools = [
            tool("get weather", json!({"type": "object"})),
            tool(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
        ];
        let specs = [
            ToolSpec::new("get weather", ["t1"]),
            ToolSpec::new("echo", ["t1", "t2"])
                .rename("say")
                .timeout(std::time::Duration::from_millis(1500))
                .max_output_bytes(10),
        ];
        let got = select("s", Era::Handshake, &tools, &specs, None, &target()).expect("loads");
        assert_eq!(got[0].binding.name(), "get_weather");
        assert_eq!(got[0].remote, "get weather");
        assert!(!got[0].binding.is_mcp(), "a stdio binding has no URL");
        assert_eq!(got[1].binding.name(), "say");
        assert_eq!(got[1].binding.timeout().as_secs(), 2, "rounded up");
        assert_eq!(got[1].binding.max_output_bytes(), 10);
        assert!(got[1].binding.allows_tenant("t2"));
        let http = select(
            "s",
            Era::Handshake,
            &tools,
            &specs[..1],
            Some("http://h/mcp"),
            &target(),
        )
        .expect("loads");
        assert_eq!(http[0].binding.mcp().map(|m| m.tool()), Some("get weather"));
    }

    #[test]
    fn missing_and_hidden_tools_are_named_with_close_names() {
        let tools = [
            tool("echo", json!({"type": "object"})),
            tool(
                "bad",
                json!({"type": "object", "properties": {"r": {"type": "object", "x-mcp-header": "R"}}}),
            ),
        ];
        let err = select(
            "s",
            Era::Handshake,
            &tools,
            &[ToolSpec::new("ecko", ["t"])],
            None,
            &target(),
        )
        .err()
        .expect("missing");
        assert!(
            err.to_string()
                .contains("\"ecko\" (did you mean \"echo\"?)"),
            "{err}"
        );
        // In the 2026 era a tool with an invalid header annotation is not offered.
        let v = brain_mcp_proto::version::ProtocolVersion::V2026_07_28;
        let spec = [ToolSpec::new("bad", ["t"])];
        assert!(select("s", Era::Stateless(v), &tools, &spec, None, &target()).is_err());
        assert!(select("s", Era::Handshake, &tools, &spec, None, &target()).is_ok());
        // The config's rules hold: an invalid name is refused by the loader.
        let spec = [ToolSpec::new("echo", ["t"]).rename("no spaces allowed")];
        let err = select("s", Era::Handshake, &tools, &spec, None, &target())
            .err()
            .expect("invalid");
        assert!(matches!(err, HostError::Invalid(_)), "{err}");
    }
}
