//! Shared helpers for the managed-server tests: a host, the real stdio peers, one call
//! through the facade, and a look at which children are still alive.

use std::time::Duration;

use brain_mcp_bind::{ClientConfig, HostConfig, ManagedServer, ToolCall, ToolEvent, ToolHost};
use brain_tests::peers::Peer;
use serde_json::{Value, json};

/// The tenant the tests' tools allow.
pub(crate) const TENANT: &str = "tenant-a";

/// A host with no configured bindings.
pub(crate) fn host() -> ToolHost {
    let config = HostConfig::from_value(&json!({"tools": []})).expect("an empty config");
    ToolHost::new(config, ClientConfig::default()).expect("a host")
}

/// The Python SDK server over stdio, as a managed server named `name`.
pub(crate) fn python(name: &str) -> ManagedServer {
    let cmd = Peer::python_stdio_command().expect("the Python SDK peer");
    ManagedServer::stdio(name, &cmd.program).args(&cmd.args)
}

/// What one call produced, as the JSON the host sees.
pub(crate) struct Outcome {
    pub(crate) progress: Vec<Value>,
    pub(crate) result: Value,
}

/// Runs one call of `tool` for [`TENANT`] through the facade, reading every event.
pub(crate) async fn call(host: &ToolHost, tool: &str, call_id: &str, args: Value) -> Outcome {
    call_as(
        host,
        tool,
        ToolCall::new(TENANT, "session-1", call_id, args),
    )
    .await
}

/// Runs `call` of `tool` through the facade, reading every event.
pub(crate) async fn call_as(host: &ToolHost, tool: &str, call: ToolCall) -> Outcome {
    let mut handle = host.call(tool, call);
    let mut progress = Vec::new();
    let mut result = None;
    while let Some(event) = handle.next().await {
        let value = serde_json::to_value(&event).expect("event JSON");
        match event {
            ToolEvent::Progress(_) => progress.push(value),
            _ => result = Some(value),
        }
    }
    Outcome {
        progress,
        result: result.expect("a result event"),
    }
}

/// Asserts `result` is one of Brain's failures of `kind`; returns its message.
pub(crate) fn assert_failure(result: &Value, kind: &str, unknown_outcome: bool) -> String {
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["error"]["kind"], kind, "{result}");
    assert_eq!(result["unknown_outcome"], unknown_outcome, "{result}");
    result["error"]["message"]
        .as_str()
        .expect("a message")
        .to_owned()
}

/// Process ids of live (not zombie) processes whose command line holds `marker`.
pub(crate) fn alive_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if !matches!(state, Some("Z") | Some("X") | None) {
            found.push(pid);
        }
    }
    found
}

/// Waits until no live process's command line holds `marker`.
pub(crate) async fn wait_gone(marker: &str, within: Duration) -> Vec<u32> {
    let until = tokio::time::Instant::now() + within;
    loop {
        let alive = alive_with(marker);
        if alive.is_empty() || tokio::time::Instant::now() >= until {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
