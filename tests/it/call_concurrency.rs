//! Connections at a host's concurrency: one shared client, many calls at once, a fresh
//! session per call with its DELETE in the background (issue 16). The server counts the
//! connections it accepts; nothing here measures time, so a loaded machine cannot make
//! these tests fail, only slower.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Harness, binding, call, spec};

/// Calls running at once, as a busy host runs them.
const CONCURRENCY: usize = 64;
/// Calls per concurrent caller.
const ROUNDS: usize = 10;
/// Connections above the concurrency that the bound allows: a few for connects that
/// race a connection coming back to the pool.
const SLACK: usize = 8;

/// Makes `CONCURRENCY * ROUNDS` calls of `echo`, `CONCURRENCY` at a time, through one
/// client; returns the connections the server accepted.
async fn connections_for(era: Era, reply: Reply) -> usize {
    let server = TestServer::start(ServerConfig {
        fault_tools: false,
        keep_requests: false,
        ..ServerConfig::new(era).reply(reply)
    });
    let h = Arc::new(Harness::new());
    let echo = binding(spec("echo", &server.url(), "echo"));
    if era == Era::Handshake {
        h.client
            .set_era(&server.url(), brain_mcp_bind::Era::Handshake);
    }
    let failures = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for slot in 0..CONCURRENCY {
        let (h, echo, failures) = (h.clone(), echo.clone(), failures.clone());
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let id = format!("c{slot}-{round}");
                let out = call(&h, &echo, &id, json!({"text": "x"})).await;
                if out.event.is_error {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a caller task");
    }
    h.flush().await;
    let counters = server.counters();
    let calls = CONCURRENCY * ROUNDS;
    println!(
        "{era:?} {reply:?}: {calls} calls at {CONCURRENCY} at once opened {} connections \
         (peak {} open), {} requests",
        counters.accepted, counters.peak_open, counters.requests
    );
    assert_eq!(failures.load(Ordering::Relaxed), 0, "every call succeeded");
    let per_call = if era == Era::Handshake { 4 } else { 1 };
    assert!(
        counters.requests >= calls * per_call,
        "{} requests for {calls} calls",
        counters.requests
    );
    counters.accepted
}

fn assert_bounded(era: Era, reply: Reply, accepted: usize) {
    assert!(
        accepted <= CONCURRENCY + SLACK,
        "{era:?} {reply:?}: {accepted} connections for {} calls at {CONCURRENCY} at once; \
         the bound is {CONCURRENCY} + {SLACK}",
        CONCURRENCY * ROUNDS
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_calls_at_64_reuse_connections() {
    for reply in [Reply::Json, Reply::Sse] {
        let accepted = connections_for(Era::Handshake, reply).await;
        assert_bounded(Era::Handshake, reply, accepted);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_calls_at_64_reuse_connections() {
    for reply in [Reply::Json, Reply::Sse] {
        let accepted = connections_for(Era::Stateless, reply).await;
        assert_bounded(Era::Stateless, reply, accepted);
    }
}
