//! The tools the server offers, and `tools/list` with cursor pagination.

use serde_json::{Value, json};

use super::rpc;
use super::state::Shared;

/// Tools every configuration offers.
pub(crate) const DEMO_TOOLS: [&str; 6] =
    ["echo", "progress", "image", "structured", "fail", "elicit"];

/// Tools offered only when [`ServerConfig::fault_tools`](super::ServerConfig::fault_tools) is set.
pub(crate) const FAULT_TOOLS: [&str; 13] = [
    "hang",
    "drop_mid",
    "huge",
    "audio",
    "resource_link",
    "bad_structured",
    "rpc_error",
    "ping_first",
    "slow",
    "sampling",
    "roots",
    "bad_progress",
    "logging",
];

/// Whether `name` is callable on this server.
pub(crate) fn offers(shared: &Shared, name: &str) -> bool {
    DEMO_TOOLS.contains(&name) || (shared.config.fault_tools && FAULT_TOOLS.contains(&name))
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn sum_schema() -> Value {
    object(json!({"sum": {"type": "number"}}), &["sum"])
}

fn describe(name: &str) -> Value {
    let none = || object(json!({}), &[]);
    let (description, input, output) = match name {
        "echo" => (
            "Returns its text.",
            object(json!({"text": {"type": "string"}}), &["text"]),
            None,
        ),
        "progress" => (
            "Reports progress `steps` times, `delay_ms` apart, then returns \"done\".",
            object(
                json!({"steps": {"type": "integer", "minimum": 1}, "delay_ms": {"type": "integer", "minimum": 0}}),
                &[],
            ),
            None,
        ),
        "image" => ("Returns a 1x1 PNG image.", none(), None),
        "structured" => (
            "Adds two numbers; the sum comes as structured content.",
            object(
                json!({"a": {"type": "number"}, "b": {"type": "number"}}),
                &["a", "b"],
            ),
            Some(sum_schema()),
        ),
        "fail" => ("Always fails as a tool error (isError).", none(), None),
        "elicit" => ("Asks the user to confirm before answering.", none(), None),
        "hang" => ("Never answers; keeps the stream open.", none(), None),
        "drop_mid" => (
            "Drops the connection in the middle of its reply.",
            none(),
            None,
        ),
        "huge" => (
            "Returns a text result of `bytes` characters.",
            object(
                json!({"bytes": {"type": "integer", "minimum": 0}}),
                &["bytes"],
            ),
            None,
        ),
        "audio" => ("Returns audio content.", none(), None),
        "resource_link" => ("Returns a resource link.", none(), None),
        "bad_structured" => (
            "Returns structured content that breaks its output schema.",
            none(),
            Some(sum_schema()),
        ),
        "rpc_error" => ("Answers with a JSON-RPC internal error.", none(), None),
        "ping_first" => (
            "Pings the client and needs its answer before replying.",
            none(),
            None,
        ),
        "sampling" => ("Asks the client to sample an LLM message.", none(), None),
        "roots" => ("Asks the client for its roots.", none(), None),
        "bad_progress" => (
            "Reports progress 1, 1, 3, 2, 4 (out of 4), then returns \"done\".",
            none(),
            None,
        ),
        "logging" => (
            "Sends a log notification, then returns \"logged\".",
            none(),
            None,
        ),
        _ => (
            "Sleeps `ms` milliseconds, then answers.",
            object(json!({"ms": {"type": "integer", "minimum": 0}}), &["ms"]),
            None,
        ),
    };
    let mut tool = json!({"name": name, "description": description, "inputSchema": input});
    if let Some(output) = output {
        tool["outputSchema"] = output;
    }
    tool
}

/// The `tools/list` response message for request `id`.
pub(crate) fn list(shared: &Shared, id: &Value, params: &Value, modern: bool) -> Value {
    let names: Vec<&str> = DEMO_TOOLS
        .iter()
        .chain(FAULT_TOOLS.iter().filter(|_| shared.config.fault_tools))
        .copied()
        .collect();
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(c) => match c.as_str().and_then(|s| s.parse::<usize>().ok()) {
            Some(n) if n <= names.len() => n,
            _ => return rpc::error(Some(id), rpc::INVALID_PARAMS, "Invalid cursor", None),
        },
    };
    let size = shared.config.page_size.unwrap_or(names.len()).max(1);
    let end = (start + size).min(names.len());
    let tools: Vec<Value> = names[start..end].iter().map(|n| describe(n)).collect();
    let mut result = json!({"tools": tools});
    if end < names.len() {
        result["nextCursor"] = json!(end.to_string());
    }
    if modern {
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(0);
        result["cacheScope"] = json!("public");
    }
    rpc::result(id, result)
}
