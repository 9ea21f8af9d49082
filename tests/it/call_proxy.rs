//! Calls through an HTTP proxy, end to end: `McpClient::with_config` with an explicit
//! proxy, against the test MCP server, in both eras; and a proxy refusing the client,
//! which fails the call at once with nothing sent.

use std::time::{Duration, Instant};

use brain_mcp_bind::{ClientConfig, McpClient, McpExecutor, ProxyConfig};
use brain_tests::proxy::{ProxyOptions, TestProxy};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec, success};

const PASSWORD: &str = "pr0xy-s3cret-9c1e";

fn through(proxy: &str) -> Harness {
    let mut config = ClientConfig::default();
    config.proxy = ProxyConfig::url(proxy);
    let client = McpClient::with_config(config).expect("a client");
    let executor = McpExecutor::new(client.clone());
    Harness { client, executor }
}

#[tokio::test]
async fn calls_go_through_the_proxy_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        let proxy = TestProxy::start(ProxyOptions::default().credentials("brain", PASSWORD));
        let h = through(&proxy.url_with("brain", PASSWORD));
        let mut echo = spec("echo", &server.url(), "echo");
        echo["headers"] = json!({"X-Team": "search"});
        let out = call(&h, &binding(echo), "px-1", json!({"text": "via proxy"})).await;
        let text = json!([{"type": "text", "text": "via proxy"}]);
        assert_eq!(out.result, success("px-1", text, None), "{era:?}");
        h.flush().await;
        let seen = proxy.seen();
        let received = server.stats().received;
        assert_eq!(
            seen.len(),
            received.len(),
            "{era:?}: every request went through it"
        );
        // "brain:pr0xy-s3cret-9c1e"
        let basic = "Basic YnJhaW46cHIweHktczNjcmV0LTljMWU=";
        for s in &seen {
            assert!(s.target.starts_with(&server.url()), "absolute form: {s:?}");
            assert_eq!(s.proxy_authorization.as_deref(), Some(basic));
        }
        if era == Era::Handshake {
            assert!(seen.iter().any(|s| s.method == "DELETE"), "{seen:?}");
        }
        assert!(
            received
                .iter()
                .all(|r| r.header("x-team") == Some("search"))
        );
        assert_eq!(h.client.stats().connections_opened, 1, "{era:?}");
    }
}

#[tokio::test]
async fn a_proxy_refusing_the_client_fails_the_call_at_once() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let proxy = TestProxy::start(ProxyOptions::default().credentials("brain", "right"));
    let h = through(&proxy.url_with("brain", PASSWORD));
    let started = Instant::now();
    let out = call(
        &h,
        &binding(spec("echo", &server.url(), "echo")),
        "px-2",
        json!({}),
    )
    .await;
    let message = assert_failure(&out.result, "connect_failed", false);
    assert!(
        message.contains(&format!(
            "the proxy http://{} refused the connection: 407 Proxy Authentication Required",
            proxy.addr()
        )),
        "{message}"
    );
    assert!(!out.result.to_string().contains(PASSWORD), "{message}");
    // Refused for who we are: not retried until the call's deadline.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(proxy.seen().len(), 1, "one probe, not retried");
    assert!(server.stats().received.is_empty());
}
