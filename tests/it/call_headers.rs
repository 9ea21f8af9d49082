//! Extra headers per server: a binding's `headers` (and a managed server's
//! `ManagedServer::header`) reach the server on every request of a call, in both eras:
//! the probe, `initialize`, `tools/call`, the cancel notification, the resuming GET and
//! the session DELETE.

use std::time::Duration;

use brain_mcp_bind::HostErrorKind;
use brain_mcp_bind::{ClientConfig, HostConfig, ManagedServer, ToolHost, ToolSpec};
use brain_tests::server::{Era, RawReply, Received, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, SETTLE, binding, call, call_with, spec};

fn with_headers(url: &str, tool: &str) -> Value {
    let mut b = spec(tool, url, tool);
    b["headers"] = json!({"X-Team": "search", "x-request-source": "brain agent"});
    b
}

/// Every request the server received carries both headers.
fn assert_all_carry(received: &[Received]) {
    assert!(!received.is_empty());
    for r in received {
        assert_eq!(r.header("x-team"), Some("search"), "{r:?}");
        assert_eq!(r.header("X-Request-Source"), Some("brain agent"), "{r:?}");
    }
}

#[tokio::test]
async fn headers_reach_every_request_of_a_call_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        let h = Harness::new();
        let echo = binding(with_headers(&server.url(), "echo"));
        let out = call(&h, &echo, "hd-1", json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{era:?}: {}", out.result);
        h.flush().await;
        let stats = server.stats();
        let methods: Vec<(&str, Option<&str>)> = stats
            .received
            .iter()
            .map(|r| (r.http_method.as_str(), r.method.as_deref()))
            .collect();
        match era {
            Era::Handshake => {
                for wanted in [
                    ("POST", Some("initialize")),
                    ("POST", Some("notifications/initialized")),
                    ("POST", Some("tools/call")),
                    ("DELETE", None),
                ] {
                    assert!(methods.contains(&wanted), "{wanted:?} in {methods:?}");
                }
            }
            _ => assert!(
                methods.contains(&("POST", Some("tools/call"))),
                "{methods:?}"
            ),
        }
        assert_all_carry(&stats.received);
    }
}

#[tokio::test]
async fn a_cancelled_call_carries_them_on_its_cancel_and_delete() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let h = Harness::new();
    let hang = binding(with_headers(&server.url(), "hang"));
    let call = Call::new("hd-cancel", json!({}));
    let cancel = call.cancel.clone();
    let (out, ()) = tokio::join!(call_with(&h, &hang, call), async {
        server
            .wait_for(SETTLE, |s| s.count("tools/call") == 1)
            .await;
        cancel.cancel();
    });
    assert_eq!(out.result["error"]["kind"], "cancelled", "{}", out.result);
    h.flush().await;
    let (stats, held) = server
        .wait_for(SETTLE, |s| {
            s.count("notifications/cancelled") == 1 && s.deletes().len() == 1
        })
        .await;
    assert!(held, "{stats:?}");
    assert_all_carry(&stats.received);
}

#[tokio::test]
async fn a_resumed_stream_carries_them_on_its_get() {
    // The call's stream ends after a priming event; the client resumes it with GET and
    // Last-Event-ID, and the GET brings the result.
    let call_id = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut config = ServerConfig::new(Era::Handshake).hook(move |seen| {
        let mut id = call_id.lock().expect("the call's id");
        if seen.tool() == Some("echo") {
            *id = seen.id_json();
            let mut reply = RawReply::sse("");
            reply.body = b"id: ev-1\nretry: 10\ndata: \n\n".to_vec();
            return Some(reply);
        }
        (seen.http_method == "GET").then(|| {
            RawReply::sse(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"resumed"}}]}}}}"#
            ))
        })
    });
    config.fault_tools = false;
    let server = TestServer::start(config);
    let h = Harness::new();
    let echo = binding(with_headers(&server.url(), "echo"));
    let out = call(&h, &echo, "hd-resume", json!({"text": "x"})).await;
    assert_eq!(
        out.result["content"][0]["text"], "resumed",
        "{}",
        out.result
    );
    h.flush().await;
    let stats = server.stats();
    let get = stats.received.iter().find(|r| r.http_method == "GET");
    assert_eq!(get.and_then(|g| g.header("last-event-id")), Some("ev-1"));
    assert_all_carry(&stats.received);
}

#[tokio::test]
async fn a_managed_servers_headers_reach_discovery_and_calls() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        let host = ToolHost::new(
            HostConfig::from_value(&json!({"tools": []})).expect("config"),
            ClientConfig::default(),
        )
        .expect("a host");
        let managed = ManagedServer::http("tagged", server.url())
            .header("X-Team", "search")
            .header("X-Request-Source", "brain agent")
            .tool(ToolSpec::new("echo", [crate::call_support::TENANT]));
        host.add_server(managed).await.expect("adds");
        let out = crate::stdio_support::call(&host, "echo", "hd-m", json!({"text": "m"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
        host.shutdown(Duration::from_secs(5)).await;
        let stats = server.stats();
        assert!(stats.count("tools/list") >= 1, "{era:?}: {stats:?}");
        assert_all_carry(&stats.received);
    }
}

#[tokio::test]
async fn a_managed_server_refuses_headers_the_client_owns() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let host = ToolHost::new(
        HostConfig::from_value(&json!({"tools": []})).expect("config"),
        ClientConfig::default(),
    )
    .expect("a host");
    for (name, value, expected) in [
        (
            "Mcp-Session-Id",
            "x",
            "server \"bad\": header \"Mcp-Session-Id\" is set by the MCP client and cannot be given",
        ),
        (
            "Authorization",
            "Bearer s3cret",
            "server \"bad\": header \"Authorization\" is set by the client from token_env; a secret belongs there",
        ),
        (
            "X-Team",
            "s3cret\r\nHost: evil",
            "server \"bad\": header \"X-Team\": value must be visible ASCII characters and spaces (no line breaks or other control characters)",
        ),
    ] {
        let managed = ManagedServer::http("bad", server.url())
            .header(name, value)
            .tool(ToolSpec::new("echo", [crate::call_support::TENANT]));
        let err = host.add_server(managed).await.expect_err("refused");
        assert_eq!(err.kind(), HostErrorKind::Invalid);
        assert_eq!(err.message(), expected);
        assert_eq!(err.delivery(), brain_mcp_bind::Delivery::NotSent);
    }
    assert!(server.stats().received.is_empty(), "nothing was sent");
}
