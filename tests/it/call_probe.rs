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

#[tokio::test]
async fn calls_arriving_together_at_a_new_server_share_one_probe() {
    // 32 calls start at once against a 2026 server the client has never met: one
    // server/discover between them, then 32 calls. Before, each call sent its own probe,
    // so a host's burst of C calls cost C probes.
    for (era, probes_expected) in [(Era::Stateless, 1), (Era::Handshake, 1)] {
        let server =
            brain_tests::server::TestServer::start(brain_tests::server::ServerConfig::new(era));
        let h = Harness::new();
        let echo = binding(spec("echo", &server.url(), "echo"));
        let calls: Vec<_> = (0..32)
            .map(|i| {
                let (h, echo) = (&h, &echo);
                async move { call(h, echo, &format!("burst-{i}"), json!({"text": "hi"})).await }
            })
            .collect();
        let outcomes = join_all(calls).await;
        for out in &outcomes {
            assert_eq!(out.result["is_error"], false, "{:?}: {}", era, out.result);
        }
        let stats = server.stats();
        assert_eq!(
            stats.count("server/discover"),
            probes_expected,
            "{era:?}: {:?}",
            stats.methods()
        );
        assert_eq!(stats.count("tools/call"), 32, "{era:?}");
    }
}

/// Polls every future to completion on the current task.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in pinned.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}
