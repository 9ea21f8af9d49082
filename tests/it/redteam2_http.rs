//! Red team 2: the host facade against an HTTP server that is transient for ever.

use std::time::{Duration, Instant};

use brain_mcp_bind::{ClientConfig, HostConfig, ManagedServer, ToolCall, ToolHost, ToolSpec};
use brain_tests::server::{Era, RawReply};
use serde_json::json;

use crate::hostile_support::hostile;
use crate::stdio_support::{assert_failure, call_as};

/// Promise 1: an era probe answered 503 with a day-long `Retry-After`, for ever, ends by
/// the bound that applies: `discovery_timeout` for a managed server being added, and a
/// call's own `with_timeout` (shorter than its binding's 300 s) for a configured one.
#[tokio::test]
async fn a_server_transient_for_ever_is_bounded_by_each_deadline() {
    let server = hostile(Era::Both, |_| {
        Some(RawReply::json(503, "{}").header("retry-after", "86400"))
    });
    let config = HostConfig::from_value(&json!({"tools": [{
        "name": "echo", "description": "d", "input_schema": {"type": "object"},
        "url": server.url(), "mcp_tool": "echo", "tenants": ["acme"],
        "timeout_seconds": 300, "max_output_bytes": 4096
    }]}))
    .expect("a config");
    let host = ToolHost::new(config, ClientConfig::default()).expect("a host");

    let started = Instant::now();
    let added = host
        .add_server(
            ManagedServer::http("flaky", server.url())
                .tool(ToolSpec::new("echo", ["acme"]).rename("flaky_echo"))
                .discovery_timeout(Duration::from_secs(2)),
        )
        .await;
    let took = started.elapsed();
    assert!(added.is_err(), "{added:?}");
    assert!(took < Duration::from_secs(3), "add_server took {took:?}");

    let started = Instant::now();
    let call = ToolCall::new("acme", "s", "c-1", json!({})).with_timeout(Duration::from_secs(1));
    let out = call_as(&host, "echo", call).await;
    let took = started.elapsed();
    // Either the wait would pass the deadline (connect_failed at once) or the deadline
    // ends it; never the server's day.
    let kind = out.result["error"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        kind == "connect_failed" || kind == "timeout",
        "{}",
        out.result
    );
    if kind == "connect_failed" {
        assert_failure(&out.result, "connect_failed", false);
    }
    assert!(took < Duration::from_millis(1500), "the call took {took:?}");
    assert!(host.shutdown(Duration::from_secs(5)).await);
}
