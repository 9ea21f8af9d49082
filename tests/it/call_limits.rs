//! A server's limit of calls in flight: a call waits for a slot inside its own deadline,
//! and one that never gets one fails as a timeout with nothing sent.

use std::time::Duration;

use brain_mcp_bind::{ClientConfig, HostConfig, ManagedServer, ToolCall, ToolHost, ToolSpec};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Call, Harness, assert_failure, binding, call, call_with, spec};

fn faulty() -> TestServer {
    let mut config = ServerConfig::new(Era::Stateless);
    config.fault_tools = true;
    TestServer::start(config)
}

#[tokio::test]
async fn a_configured_limit_holds_calls_until_a_slot_frees() {
    let server = faulty();
    let mut hang = spec("hang", &server.url(), "hang");
    hang["max_in_flight"] = json!(1);
    let hang = binding(hang);
    // Another binding of the same server: the server's limit holds for it too.
    let echo_spec = spec("echo", &server.url(), "echo");
    let config =
        HostConfig::from_value(&json!({"tools": [hang.to_value(), echo_spec]})).expect("config");
    let echo = config.get("echo").expect("echo").clone();
    assert_eq!(echo.max_in_flight(), Some(1));
    let h = Harness::new();
    let first = Call::new("c-hang", json!({}));
    let cancel = first.cancel.clone();
    let hanging = tokio::spawn({
        let h_client = h.client.clone();
        let hang = hang.clone();
        async move {
            let h = Harness {
                executor: brain_mcp_bind::McpExecutor::new(h_client.clone()),
                client: h_client,
            };
            call_with(&h, &hang, first).await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut waiting = Call::new("c-wait", json!({"text": "hi"}));
    waiting.timeout = Some(Duration::from_secs(1));
    let out = call_with(&h, &echo, waiting).await;
    assert_failure(&out.result, "timeout", false);
    assert_eq!(
        server.stats().count("tools/call"),
        1,
        "the waiting call was never sent"
    );
    cancel.cancel();
    let _ = hanging.await;
    let out = call(&h, &echo, "c-after", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    h.flush().await;
}

#[tokio::test]
async fn a_managed_server_s_limit_holds_its_calls() {
    let server = faulty();
    let host = ToolHost::new(
        HostConfig::from_value(&json!({"tools": []})).expect("empty"),
        ClientConfig::default(),
    )
    .expect("host");
    host.add_server(
        ManagedServer::http("limited", server.url())
            .max_in_flight(1)
            .tool(ToolSpec::new("hang", ["tenant-a"]))
            .tool(ToolSpec::new("echo", ["tenant-a"])),
    )
    .await
    .expect("adds");
    let hanging = host.call("hang", ToolCall::new("tenant-a", "s", "h1", json!({})));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let waiting = ToolCall::new("tenant-a", "s", "h2", json!({"text": "hi"}))
        .with_timeout(Duration::from_secs(1));
    let out = crate::stdio_support::call_as(&host, "echo", waiting).await;
    crate::stdio_support::assert_failure(&out.result, "timeout", false);
    hanging.cancel();
    let _ = hanging.result().await;
    let out = crate::stdio_support::call_as(
        &host,
        "echo",
        ToolCall::new("tenant-a", "s", "h3", json!({"text": "hi"})),
    )
    .await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert!(host.shutdown(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn a_busy_server_s_retry_after_is_honoured_for_listing_never_for_calls() {
    let busy_once = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = busy_once.clone();
    let server = TestServer::start(ServerConfig::new(Era::Stateless).hook(move |seen| {
        let busy = || brain_tests::server::RawReply::json(429, "{}").header("retry-after", "1");
        match seen.method() {
            Some("tools/list") if flag.swap(false, std::sync::atomic::Ordering::SeqCst) => {
                Some(busy())
            }
            Some("tools/call") => Some(busy()),
            _ => None,
        }
    }));
    let h = Harness::new();
    let started = std::time::Instant::now();
    let listed =
        brain_mcp_bind::discover::list(&h.client, &server.url(), None, Duration::from_secs(10))
            .await
            .expect("listed after one wait");
    assert!(!listed.tools.is_empty());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited as told"
    );
    assert_eq!(server.stats().count("tools/list"), 2);
    assert!(!busy_once.load(std::sync::atomic::Ordering::SeqCst));
    // A tools/call refused as busy is not sent again: it fails at once.
    let echo = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], true, "{}", out.result);
    assert_eq!(server.stats().count("tools/call"), 1);
}
