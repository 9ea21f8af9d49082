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
