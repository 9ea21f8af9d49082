//! The era probe end to end: only a definite answer decides the era. A transient answer
//! (408, 429, 5xx) is retried within the call's deadline and never cached.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use brain_tests::server::{Era, RawReply};
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};
use crate::hostile_support::hostile;

/// A 2026-only server whose first `transient` probes are answered with `status`.
fn flaky(status: u16, transient: usize) -> (brain_tests::server::TestServer, Arc<AtomicUsize>) {
    let probes = Arc::new(AtomicUsize::new(0));
    let seen = probes.clone();
    let server = hostile(Era::Stateless, move |request| {
        if request.method() != Some("server/discover") {
            return None;
        }
        let n = seen.fetch_add(1, Ordering::SeqCst);
        (n < transient)
            .then(|| RawReply::json(status, r#"{"error":"try again"}"#).header("retry-after", "0"))
    });
    (server, probes)
}

#[tokio::test]
async fn a_transient_answer_to_the_probe_is_retried_not_taken_for_the_handshake_era() {
    for status in [408, 429, 503] {
        let (server, probes) = flaky(status, 1);
        let h = Harness::new();
        let echo = binding(spec("echo", &server.url(), "echo"));
        let out = call(&h, &echo, "p-1", json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{status}: {}", out.result);
        assert_eq!(probes.load(Ordering::SeqCst), 2, "{status}");
        let stats = server.stats();
        assert_eq!(
            stats.count("initialize"),
            0,
            "{status}: {:?}",
            stats.methods()
        );
        assert_eq!(stats.count("tools/call"), 1);
    }
}

#[tokio::test]
async fn a_server_that_stays_unavailable_fails_as_connect_failed_naming_the_status() {
    let (server, probes) = flaky(503, usize::MAX);
    let h = Harness::new();
    let echo = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &echo, "p-2", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "connect_failed", false);
    assert!(message.contains("503"), "{message}");
    let stats = server.stats();
    assert_eq!(stats.count("initialize"), 0, "{:?}", stats.methods());
    assert_eq!(stats.count("tools/call"), 0);
    // Nothing was cached: the next call probes again, and succeeds once the server is back.
    let before = probes.load(Ordering::SeqCst);
    assert!(before >= 2, "{before}");
    let (healthy, _) = flaky(503, 0);
    let out = call(
        &h,
        &binding(spec("echo", &healthy.url(), "echo")),
        "p-3",
        json!({"text": "x"}),
    )
    .await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let out = call(&h, &echo, "p-4", json!({"text": "hi"})).await;
    assert_failure(&out.result, "connect_failed", false);
    assert!(probes.load(Ordering::SeqCst) > before, "probed again");
}
