//! `McpClient::stats`: what a host reads to see that sessions end and connections stay few.

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Harness, binding, call, spec};

#[tokio::test]
async fn sessions_and_connections_are_counted_as_the_server_sees_them() {
    let handshake = TestServer::start(ServerConfig::new(Era::Handshake));
    let stateless = TestServer::start(ServerConfig::new(Era::Stateless));
    let h = Harness::new();
    assert_eq!(h.client.stats(), brain_mcp_bind::ClientStats::default());
    for (i, server) in [&handshake, &handshake, &handshake, &stateless]
        .iter()
        .enumerate()
    {
        let echo = binding(spec("echo", &server.url(), "echo"));
        let out = call(&h, &echo, &format!("s-{i}"), json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    h.flush().await;
    let stats = h.client.stats();
    let seen = handshake.stats();
    assert_eq!(stats.sessions_opened, 3, "{stats:?}");
    assert_eq!(stats.sessions_opened, seen.sessions_opened.len() as u64);
    assert_eq!(stats.sessions_closed, seen.sessions_deleted.len() as u64);
    assert_eq!(stats.sessions_close_failed, 0);
    assert_eq!(stats.cleanup_running, 0);
    let accepted = handshake.stats().connections + stateless.stats().connections;
    assert_eq!(stats.connections_opened, accepted as u64, "{stats:?}");
    assert!(stats.connections_open <= stats.connections_opened);
}

#[tokio::test]
async fn a_delete_never_answered_counts_as_a_failed_close() {
    let server = TestServer::start(ServerConfig {
        stall_delete: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &echo, "s-stall", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    h.flush().await;
    let stats = h.client.stats();
    assert_eq!(
        (
            stats.sessions_opened,
            stats.sessions_closed,
            stats.sessions_close_failed
        ),
        (1, 0, 1),
        "{stats:?}"
    );
}

#[tokio::test]
async fn a_call_behind_deletes_never_answered_waits_a_second_not_their_bound() {
    let server = TestServer::start(ServerConfig {
        stall_delete: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    // Two calls, each followed by a pause in which its DELETE takes a connection and
    // holds it: the call's own, then the spare.
    for i in 0..2 {
        let out = call(&h, &echo, &format!("s-{i}"), json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // The third call waits for its turn for a second (the transport's bound for a
    // request without a connection), then opens one; the DELETEs' own bound is 2 s.
    let start = std::time::Instant::now();
    let out = call(&h, &echo, "s-2", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let took = start.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(900)
            && took < std::time::Duration::from_millis(1500),
        "the call took {took:?}"
    );
    h.flush().await;
    assert_eq!(h.client.stats().sessions_close_failed, 3);
}
