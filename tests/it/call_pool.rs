//! Connection reuse over many calls, and the exact exchanges of one call in each era.

use std::sync::Arc;
use std::time::Duration;

use brain_tests::server::{Era, Received, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Harness, TENANT, binding, call, spec, success};

/// One label per request that reached the server: the JSON-RPC method, or the HTTP method
/// when there was none (the DELETE).
fn labels(received: &[Received]) -> Vec<String> {
    received
        .iter()
        .map(|r| r.method.clone().unwrap_or_else(|| r.http_method.clone()))
        .collect()
}

async fn many_calls(era: Era) {
    let server = TestServer::start(ServerConfig::new(era));
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    for i in 0..200 {
        let id = format!("pool-{i}");
        let out = call(&h, &echo, &id, json!({"text": format!("n{i}")})).await;
        let text = json!([{"type": "text", "text": format!("n{i}")}]);
        assert_eq!(out.result, success(&id, text, None));
    }
    h.flush().await;
    let stats = server.stats();
    println!(
        "{era:?}: 200 calls over {} connection(s)",
        stats.connections
    );
    assert!(
        stats.connections <= 3,
        "{era:?}: {} connections for 200 calls",
        stats.connections
    );
    assert_eq!(stats.count("tools/call"), 200);
    assert_eq!(stats.count("server/discover"), 1, "the era is probed once");
    if era == Era::Handshake {
        assert_eq!(stats.sessions_opened.len(), 200);
        assert_eq!(stats.sessions_opened, stats.sessions_deleted);
    } else {
        assert!(stats.sessions_opened.is_empty());
        assert!(stats.deletes().is_empty());
    }
}

#[tokio::test]
async fn two_hundred_handshake_calls_reuse_connections() {
    many_calls(Era::Handshake).await;
}

#[tokio::test]
async fn two_hundred_stateless_calls_reuse_connections() {
    many_calls(Era::Stateless).await;
}

#[tokio::test]
async fn connections_the_server_closed_while_idle_are_not_used() {
    for era in [Era::Handshake, Era::Stateless] {
        let mut config = ServerConfig::new(era);
        config.close_idle_after = Some(Duration::from_millis(50));
        let server = TestServer::start(config);
        let h = Harness::new();
        let echo = binding(spec("echo", &server.url(), "echo"));
        for i in 0..4 {
            let id = format!("idle-{i}");
            let out = call(&h, &echo, &id, json!({"text": "x"})).await;
            let text = json!([{"type": "text", "text": "x"}]);
            assert_eq!(out.result, success(&id, text, None), "{era:?}");
            h.flush().await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let stats = server.stats();
        assert_eq!(stats.count("tools/call"), 4, "each call sent once");
        assert!(stats.connections >= 4, "the server closed idle connections");
    }
}

#[tokio::test]
async fn concurrent_calls_each_get_their_own_session() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let h = Arc::new(Harness::new());
    let slow = binding(spec("slow", &server.url(), "slow"));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (h, slow) = (h.clone(), slow.clone());
        tasks.push(tokio::spawn(async move {
            let id = format!("par-{i}");
            let out = call(&h, &slow, &id, json!({"ms": 50})).await;
            let text = json!([{"type": "text", "text": "slept 50 ms"}]);
            assert_eq!(out.result, success(&id, text, None));
        }));
    }
    for task in tasks {
        task.await.expect("the call task");
    }
    h.flush().await;
    let stats = server.stats();
    assert_eq!(stats.count("tools/call"), 16);
    assert_eq!(stats.sessions_opened.len(), 16);
    let mut opened = stats.sessions_opened.clone();
    let mut deleted = stats.sessions_deleted.clone();
    opened.sort();
    deleted.sort();
    assert_eq!(opened, deleted);
    // Each call ran in the session its own initialize opened.
    let sessions: std::collections::HashSet<_> = stats
        .with_method("tools/call")
        .filter_map(|r| r.session_id.clone())
        .collect();
    assert_eq!(sessions.len(), 16, "no two calls shared a session");
}

/// The scope and progress token every `tools/call` carries.
fn assert_call_meta(r: &Received, call_id: &str) {
    let meta = &r.body["params"]["_meta"];
    assert_eq!(
        meta["brain.dev/scope"],
        json!({"tenant_id": TENANT, "session_id": "session-1", "call_id": call_id})
    );
    assert_eq!(meta["progressToken"], json!(call_id));
    assert_eq!(r.body["params"]["name"], "echo");
    assert_eq!(r.body["params"]["arguments"], json!({"text": "x"}));
}

#[tokio::test]
async fn handshake_exchanges_per_call() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    call(&h, &echo, "x-1", json!({"text": "x"})).await;
    h.flush().await;
    let first = server.stats().received;
    let per_call = [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "DELETE",
    ];
    let mut expected = vec!["server/discover".to_owned()];
    expected.extend(per_call.iter().map(|s| (*s).to_owned()));
    assert_eq!(labels(&first), expected);
    // We declare no client capabilities at all.
    assert_eq!(first[1].body["params"]["capabilities"], json!({}));
    assert_call_meta(&first[3], "x-1");
    let session = first[1..].iter().map(|r| r.session_id.clone());
    let opened = server.stats().sessions_opened[0].clone();
    assert_eq!(
        session.collect::<Vec<_>>(),
        [
            None,
            Some(opened.clone()),
            Some(opened.clone()),
            Some(opened)
        ]
    );

    call(&h, &echo, "x-2", json!({"text": "x"})).await;
    h.flush().await;
    let second = server.stats().received;
    assert_eq!(labels(&second[first.len()..]), per_call);
    assert_call_meta(&second[first.len() + 2], "x-2");
}

#[tokio::test]
async fn stateless_exchanges_per_call() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    call(&h, &echo, "y-1", json!({"text": "x"})).await;
    call(&h, &echo, "y-2", json!({"text": "x"})).await;
    h.flush().await;
    let received = server.stats().received;
    assert_eq!(
        labels(&received),
        ["server/discover", "tools/call", "tools/call"]
    );
    for (r, id) in received[1..].iter().zip(["y-1", "y-2"]) {
        assert_call_meta(r, id);
        assert_eq!(r.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(r.mcp_method.as_deref(), Some("tools/call"));
        assert_eq!(r.mcp_name.as_deref(), Some("echo"));
        assert!(r.session_id.is_none());
        let meta: &Value = &r.body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        // No capability but the tasks extension: a call may become a task.
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
        assert!(
            meta["io.modelcontextprotocol/clientInfo"]["name"].is_string(),
            "{meta}"
        );
    }
}
