//! Abandoned calls: timeout and cancel in both eras, and what each leaves at the server.

use brain_tests::server::{Era, ServerConfig, Stats, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, SETTLE, assert_failure, binding, call_with, spec};

/// The JSON-RPC id of the one `tools/call` the server received.
fn call_id_at_server(stats: &Stats) -> Value {
    let calls: Vec<&Value> = stats
        .with_method("tools/call")
        .filter_map(|r| r.id.as_ref())
        .collect();
    assert_eq!(calls.len(), 1, "one tools/call: {:?}", stats.methods());
    calls[0].clone()
}

/// Handshake era: after the abandoned call, a `notifications/cancelled` for its request id
/// reached the server, and then the DELETE of its session.
async fn cancelled_then_deleted(h: &Harness, server: &TestServer) {
    h.flush().await;
    let (stats, held) = server
        .wait_for(SETTLE, |s| {
            !s.cancelled_request_ids().is_empty() && !s.sessions_deleted.is_empty()
        })
        .await;
    assert!(held, "no cancel and DELETE: {:?}", stats.received);
    let id = call_id_at_server(&stats);
    assert_eq!(stats.cancelled_request_ids(), [id]);
    let cancel_at = stats
        .received
        .iter()
        .position(|r| r.cancelled_request_id().is_some())
        .expect("the cancel");
    let delete_at = stats
        .received
        .iter()
        .position(|r| r.http_method == "DELETE")
        .expect("the DELETE");
    assert!(
        cancel_at < delete_at,
        "cancel before DELETE: {:?}",
        stats.received
    );
    assert_eq!(stats.sessions_opened, stats.sessions_deleted);
    assert_eq!(stats.sessions_opened.len(), 1);
    let session = stats.received[cancel_at].session_id.clone();
    assert_eq!(session.as_ref(), Some(&stats.sessions_opened[0]));
}

/// Stateless era: the server saw the response stream closed, and nothing else was sent.
async fn stream_closed(h: &Harness, server: &TestServer) {
    h.flush().await;
    let (stats, held) = server
        .wait_for(SETTLE, |s| !s.abandoned_streams.is_empty())
        .await;
    assert!(held, "the stream was not closed: {stats:?}");
    assert_eq!(stats.abandoned_streams, [call_id_at_server(&stats)]);
    assert!(stats.cancelled_request_ids().is_empty());
    assert!(stats.deletes().is_empty());
    assert!(stats.sessions_opened.is_empty());
}

fn hang_binding(
    server: &TestServer,
    timeout_seconds: u64,
) -> std::sync::Arc<brain_tools_core::Binding> {
    let mut hang = spec("hang", &server.url(), "hang");
    hang["timeout_seconds"] = json!(timeout_seconds);
    binding(hang)
}

/// Runs `hang` and cancels it once the server has the `tools/call`.
async fn cancel_once_called(h: &Harness, server: &TestServer, call_id: &str) -> Value {
    let hang = hang_binding(server, 60);
    let call = Call::new(call_id, json!({}));
    let cancel = call.cancel.clone();
    let canceller = async {
        let (_, held) = server
            .wait_for(SETTLE, |s| s.count("tools/call") == 1)
            .await;
        assert!(held, "the call never reached the server");
        cancel.cancel();
    };
    let (out, ()) = tokio::join!(call_with(h, &hang, call), canceller);
    out.result
}

#[tokio::test]
async fn handshake_timeout_cancels_then_deletes() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let h = Harness::new();
    let out = call_with(
        &h,
        &hang_binding(&server, 1),
        Call::new("a-timeout", json!({})),
    )
    .await;
    let message = assert_failure(&out.result, "timeout", true);
    assert!(message.contains("1 s"), "{message}");
    cancelled_then_deleted(&h, &server).await;
}

#[tokio::test]
async fn handshake_cancel_cancels_then_deletes() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let h = Harness::new();
    let result = cancel_once_called(&h, &server, "a-cancel").await;
    assert_failure(&result, "cancelled", true);
    cancelled_then_deleted(&h, &server).await;
}

#[tokio::test]
async fn stateless_timeout_closes_the_stream() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let h = Harness::new();
    let out = call_with(
        &h,
        &hang_binding(&server, 1),
        Call::new("s-timeout", json!({})),
    )
    .await;
    assert_failure(&out.result, "timeout", true);
    stream_closed(&h, &server).await;
}

#[tokio::test]
async fn stateless_cancel_closes_the_stream() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let h = Harness::new();
    let result = cancel_once_called(&h, &server, "s-cancel").await;
    assert_failure(&result, "cancelled", true);
    stream_closed(&h, &server).await;
}

/// Handshake era: a call cancelled, or dropped, while its `initialize` is unanswered
/// still ends the session the server opened: the answer is read in the background and
/// the session it names is DELETEd (no `tools/call` is sent).
#[tokio::test]
async fn a_call_abandoned_during_initialize_still_deletes_the_session() {
    for drop_it in [false, true] {
        let server = TestServer::start(ServerConfig {
            initialize_delay: Some(std::time::Duration::from_millis(300)),
            ..ServerConfig::new(Era::Handshake)
        });
        let h = Harness::new();
        let call = Call::new("an-early-cancel", json!({}));
        let cancel = call.cancel.clone();
        let hang = hang_binding(&server, 60);
        let opened = async {
            let (_, held) = server
                .wait_for(SETTLE, |s| s.sessions_opened.len() == 1)
                .await;
            assert!(held, "initialize never reached the server");
        };
        if drop_it {
            tokio::select! {
                _ = call_with(&h, &hang, call) => panic!("the call ended before initialize was answered"),
                () = opened => {}
            }
        } else {
            let canceller = async {
                opened.await;
                cancel.cancel();
            };
            let (out, ()) = tokio::join!(call_with(&h, &hang, call), canceller);
            assert_failure(&out.result, "cancelled", false);
        }
        h.flush().await;
        let stats = server.stats();
        assert_eq!(
            stats.sessions_deleted, stats.sessions_opened,
            "dropped: {drop_it}"
        );
        assert_eq!(stats.count("tools/call"), 0, "dropped: {drop_it}");
        let counts = h.client.stats();
        assert_eq!(
            (counts.sessions_opened, counts.sessions_closed),
            (1, 1),
            "dropped: {drop_it}"
        );
    }
}
