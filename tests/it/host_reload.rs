//! A host takes a new config at run time: calls in flight finish with the binding they
//! started with, new calls and the tool list see the new set at once, nothing fails
//! under load, and a config that collides with a managed server changes nothing.

use std::time::Duration;

use brain_mcp_bind::{
    ClientConfig, HostConfig, HostErrorKind, ManagedServer, ToolCall, ToolHost, ToolSpec,
};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::stdio_support::call_as;

fn tool(name: &str, url: &str, mcp_tool: &str, description: &str) -> Value {
    json!({
        "name": name, "description": description, "input_schema": {"type": "object"},
        "url": url, "mcp_tool": mcp_tool, "tenants": ["acme"], "timeout_seconds": 30,
    })
}

fn names(host: &ToolHost) -> Vec<String> {
    host.tools_for("acme").into_iter().map(|t| t.name).collect()
}

#[tokio::test]
async fn a_reload_under_load_fails_no_call() {
    let mut config = ServerConfig::new(Era::Stateless);
    config.fault_tools = true;
    let server = TestServer::start(config);
    let url = server.url();
    let first = HostConfig::from_value(&json!({"tools": [
        tool("echo_a", &url, "echo", "first"),
        tool("slow_a", &url, "slow", "slow"),
    ]}))
    .expect("config");
    let host = ToolHost::new(first, ClientConfig::default()).expect("host");
    host.add_server(ManagedServer::http("managed", &url).tool(ToolSpec::new("progress", ["acme"])))
        .await
        .expect("adds");
    assert_eq!(names(&host), ["echo_a", "slow_a", "progress"]);
    // A slow call started before the reload that removes its tool.
    let slow = host.call(
        "slow_a",
        ToolCall::new("acme", "s", "slow-1", json!({"ms": 800})),
    );
    // Calls keep arriving while the config changes under them.
    let load: Vec<_> = (0..40)
        .map(|i| {
            let host = host.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(i * 10)).await;
                let call = ToolCall::new("acme", "s", format!("e{i}"), json!({"text": "hi"}));
                call_as(&host, "echo_a", call).await.result
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let second = HostConfig::from_value(&json!({"tools": [
        tool("echo_a", &url, "echo", "second"),
        tool("echo_b", &url, "echo", "new"),
    ]}))
    .expect("config");
    let report = host.reload(&second).expect("reloads");
    assert_eq!(report.added, ["echo_b"]);
    assert_eq!(report.removed, ["slow_a"]);
    assert_eq!(report.changed, ["echo_a"]);
    assert_eq!(
        names(&host),
        ["echo_a", "echo_b", "progress"],
        "the new set at once"
    );
    assert_eq!(host.tools_for("acme")[0].description, "second");
    for handle in load {
        let result = handle.await.expect("the call task");
        assert_eq!(result["is_error"], false, "{result}");
    }
    let slow = slow.result().await;
    assert!(
        slow.error.is_none(),
        "the call in flight finished with its binding: {slow:?}"
    );
    // The removed tool is gone for new calls.
    let gone = call_as(
        &host,
        "slow_a",
        ToolCall::new("acme", "s", "slow-2", json!({"ms": 1})),
    )
    .await;
    assert_eq!(
        gone.result["error"]["kind"], "tenant_not_allowed",
        "{}",
        gone.result
    );
    // A config naming a managed server's tool is refused and changes nothing.
    let clash =
        HostConfig::from_value(&json!({"tools": [tool("progress", &url, "echo", "clash")]}))
            .expect("config");
    let refused = host.reload(&clash).expect_err("refused");
    assert_eq!(refused.kind(), HostErrorKind::Invalid);
    assert_eq!(names(&host), ["echo_a", "echo_b", "progress"]);
    assert!(host.shutdown(Duration::from_secs(5)).await);
}
