//! A server that calls cannot reach trips its circuit breaker: after five calls in a row
//! fail to connect, calls fail at once, naming since when; after the cooldown one trial
//! call goes, and a server that is back closes the breaker.

use std::time::{Duration, Instant};

use brain_mcp_bind::Era as ClientEra;
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};

#[tokio::test]
async fn an_unreachable_server_fails_fast_until_a_trial_gets_through() {
    // A port with nothing listening (a server started, then stopped).
    let port = TestServer::start(ServerConfig::new(Era::Stateless))
        .addr()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let echo = binding(spec("echo", &url, "echo"));
    let h = Harness::new();
    // The era is known, so each call goes straight to the connection.
    h.client.set_era(
        &url,
        ClientEra::Stateless(brain_mcp_bind::ProtocolVersion::V2026_07_28),
    );
    for i in 0..5 {
        let out = call(&h, &echo, &format!("c{i}"), json!({"text": "hi"})).await;
        let message = assert_failure(&out.result, "connect_failed", false);
        assert!(!message.contains("unreachable since"), "{i}: {message}");
    }
    let started = Instant::now();
    let out = call(&h, &echo, "fast", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "connect_failed", false);
    assert!(
        message.contains("unreachable since") && message.contains("nothing was sent"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
    // The server comes back; calls still fail at once until the cooldown ends.
    let mut config = ServerConfig::new(Era::Stateless);
    config.port = port;
    let server = TestServer::start(config);
    let out = call(&h, &echo, "still-open", json!({"text": "hi"})).await;
    assert_failure(&out.result, "connect_failed", false);
    assert_eq!(server.stats().count("tools/call"), 0);
    tokio::time::sleep(Duration::from_millis(5_100)).await;
    let out = call(&h, &echo, "trial", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let out = call(&h, &echo, "closed", json!({"text": "again"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(server.stats().count("tools/call"), 2);
}
