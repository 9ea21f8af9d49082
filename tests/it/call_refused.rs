//! Failures before `tools/call` is sent (`unknown_outcome` false), and the bearer token.

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{
    Call, Harness, SETTLE, assert_failure, binding, call, call_with, spec, success,
};

/// Asserts nothing at all reached `server`.
fn nothing_sent(server: &TestServer) {
    let stats = server.stats();
    assert_eq!(stats.connections, 0, "connections: {stats:?}");
    assert!(stats.received.is_empty(), "received: {:?}", stats.received);
}

#[tokio::test]
async fn refused_calls_send_nothing() {
    let server = TestServer::start(ServerConfig::new(Era::Both));
    let h = Harness::new();
    let mut echo = spec("echo", &server.url(), "echo");
    echo["input_schema"] = json!({"type": "object", "properties": {"text": {"type": "string"}},
        "required": ["text"]});
    let echo = binding(echo);

    let mut other = Call::new("r-tenant", json!({"text": "x"}));
    other.tenant = "tenant-b".to_owned();
    let out = call_with(&h, &echo, other).await;
    let message = assert_failure(&out.result, "tenant_not_allowed", false);
    assert!(message.contains("tenant-b"), "{message}");

    let out = call(&h, &echo, "r-args", json!({"text": 5})).await;
    assert_failure(&out.result, "invalid_arguments", false);
    let out = call(&h, &echo, "r-args2", json!({})).await;
    assert_failure(&out.result, "invalid_arguments", false);

    let mut tokened = spec("echo_tok", &server.url(), "echo");
    tokened["token_env"] = json!("BRAIN_E2E_SURELY_UNSET_TOKEN_VARIABLE");
    let out = call(&h, &binding(tokened), "r-token", json!({"text": "x"})).await;
    let message = assert_failure(&out.result, "missing_token", false);
    assert!(
        message.contains("BRAIN_E2E_SURELY_UNSET_TOKEN_VARIABLE"),
        "{message}"
    );

    let cancelled = Call::new("r-cancel", json!({"text": "x"}));
    cancelled.cancel.cancel();
    let out = call_with(&h, &echo, cancelled).await;
    assert_failure(&out.result, "cancelled", false);

    h.flush().await;
    nothing_sent(&server);
}

#[tokio::test]
async fn connect_failed_on_a_closed_port() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let h = Harness::new();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = call(
        &h,
        &binding(spec("echo", &url, "echo")),
        "r-conn",
        json!({}),
    )
    .await;
    assert_failure(&out.result, "connect_failed", false);
    assert_eq!(h.client.era(&url), None, "no verdict is cached");
}

#[tokio::test]
async fn handshake_failed_when_initialize_fails() {
    let mut config = ServerConfig::new(Era::Handshake);
    config.initialize_fails = true;
    let server = TestServer::start(config);
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &echo, "r-init", json!({"text": "x"})).await;
    assert_failure(&out.result, "handshake_failed", false);
    h.flush().await;
    let stats = server.stats();
    assert_eq!(stats.count("initialize"), 1, "{:?}", stats.methods());
    assert_eq!(stats.count("tools/call"), 0, "{:?}", stats.methods());
}

#[tokio::test]
async fn a_stalled_handshake_times_out_without_sending_the_call() {
    let mut config = ServerConfig::new(Era::Handshake);
    config.stall_initialize = true;
    let server = TestServer::start(config);
    let h = Harness::new();
    let mut slow = spec("echo", &server.url(), "echo");
    slow["timeout_seconds"] = json!(1);
    let out = call(&h, &binding(slow), "r-stall", json!({"text": "x"})).await;
    assert_failure(&out.result, "timeout", false);
    h.flush().await;
    assert_eq!(server.stats().count("tools/call"), 0);
}

#[tokio::test]
async fn bearer_token_only_with_token_env_and_never_in_events() {
    const TOKEN: &str = "e2e-secret-token-3f9a";
    let mut config = ServerConfig::new(Era::Handshake);
    config.require_token = Some(TOKEN.to_owned());
    let server = TestServer::start(config);
    let h = Harness::new();

    // No token_env: no Authorization header; the server refuses before any call.
    let plain = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &plain, "t-none", json!({"text": "hi"})).await;
    assert_failure(&out.result, "authorization_failed", false);
    let stats = server.stats();
    assert!(stats.received.iter().all(|r| r.authorization.is_none()));
    assert_eq!(stats.count("tools/call"), 0);
    let before = stats.received.len();

    // With token_env: every request carries it, and no event mentions it.
    let mut tokened = spec("echo_tok", &server.url(), "echo");
    tokened["token_env"] = json!("BRAIN_E2E_TOKEN");
    let tokened = binding(tokened);
    let mut with = Call::new("t-with", json!({"text": "hi"}));
    with.token = Some(TOKEN.to_owned());
    let out = call_with(&h, &tokened, with).await;
    let text = json!([{"type": "text", "text": "hi"}]);
    assert_eq!(out.result, success("t-with", text, None));
    h.flush().await;
    let stats = server.stats();
    let sent = &stats.received[before..];
    assert!(
        sent.iter()
            .any(|r| r.method.as_deref() == Some("tools/call"))
    );
    assert!(sent.iter().any(|r| r.http_method == "DELETE"));
    for r in sent {
        assert_eq!(
            r.authorization.as_deref(),
            Some(&*format!("Bearer {TOKEN}"))
        );
    }

    // The background cancel and DELETE of an abandoned call carry it too.
    let mut hang = spec("hang_tok", &server.url(), "hang");
    hang["token_env"] = json!("BRAIN_E2E_TOKEN");
    hang["timeout_seconds"] = json!(1);
    let mut abandoned = Call::new("t-hang", json!({}));
    abandoned.token = Some(TOKEN.to_owned());
    let out = call_with(&h, &binding(hang), abandoned).await;
    assert_failure(&out.result, "timeout", true);
    h.flush().await;
    let (stats, held) = server
        .wait_for(SETTLE, |s| {
            s.cancelled_request_ids().len() == 1 && s.deletes().len() == 2
        })
        .await;
    assert!(held, "cancel and DELETE: {:?}", stats.received);
    for r in &stats.received[before..] {
        assert_eq!(
            r.authorization.as_deref(),
            Some(&*format!("Bearer {TOKEN}")),
            "{r:?}"
        );
    }

    // A wrong token fails as credentials refused, and the message does not echo it.
    let mut wrong = Call::new("t-wrong", json!({"text": "hi"}));
    wrong.token = Some("e2e-wrong-token-77c1".to_owned());
    let out = call_with(&h, &tokened, wrong).await;
    assert_failure(&out.result, "authorization_failed", false);
    for text in [out.result.to_string(), format!("{:?}", out.event)] {
        assert!(!text.contains("e2e-wrong-token"), "{text}");
        assert!(!text.contains(TOKEN), "{text}");
    }
    h.flush().await;
    assert_eq!(
        server.stats().count("tools/call"),
        2,
        "only the calls with the right token"
    );
}

#[tokio::test]
async fn a_token_refused_at_the_call_itself_means_the_tool_never_ran() {
    // The era is already known (as after earlier calls), so the first request is the 2026
    // tools/call itself, and the server refuses its credentials.
    let mut config = ServerConfig::new(Era::Stateless);
    config.require_token = Some("the-right-token".to_owned());
    let server = TestServer::start(config);
    let h = Harness::new();
    let version = brain_mcp_proto::version::ProtocolVersion::V2026_07_28;
    h.client
        .set_era(&server.url(), brain_mcp_bind::Era::Stateless(version));
    let mut tokened = spec("echo", &server.url(), "echo");
    tokened["token_env"] = json!("BRAIN_E2E_TOKEN");
    let mut wrong = Call::new("t-revoked", json!({"text": "hi"}));
    wrong.token = Some("a-revoked-token".to_owned());
    let out = call_with(&h, &binding(tokened), wrong).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("401"), "{message}");
    assert!(!message.contains("a-revoked-token"), "{message}");
    let stats = server.stats();
    assert_eq!(stats.received.len(), 1, "one refused request");
    assert_eq!(stats.received[0].status, Some(401));
}
