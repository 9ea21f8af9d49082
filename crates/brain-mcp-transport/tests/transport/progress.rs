//! Messages around our response: they are bounded one by one and never spend the
//! exchange budget, which is the response's.

use std::time::Duration;

use bytes::Bytes;
use http::Response;

use crate::server::{Reply, TestBody, TestServer, handler};
use crate::{client, drain, notification, post, response, stream};

/// A server answering with an event stream of `events`, each sent as its own chunk.
async fn sse_server(events: fn() -> Vec<String>) -> TestServer {
    TestServer::start(handler(move |_| async move {
        let (tx, body) = TestBody::channel();
        tokio::spawn(async move {
            for event in events() {
                if tx.send(Ok(Bytes::from(event))).await.is_err() {
                    return;
                }
            }
        });
        Reply::Respond(
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap(),
        )
    }))
    .await
}

#[tokio::test]
async fn ten_thousand_notifications_then_the_response_fit_a_small_budget() {
    let server = sse_server(|| {
        let mut events: Vec<String> = (0..10_000)
            .map(|n| format!("data: {}\n\n", notification(n)))
            .collect();
        events.push(format!("data: {}\n\n", response(1)));
        events
    })
    .await;
    let mut req = post(server.url("/mcp"), 1);
    // About 750 KB of notifications against a 4 KiB budget.
    req.budget = 4 << 10;
    let mut s = stream(client().post(req).await.unwrap());
    let (items, err) = tokio::time::timeout(Duration::from_secs(20), drain(&mut s))
        .await
        .unwrap();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(items.len(), 10_001);
    for (n, item) in items[..10_000].iter().enumerate() {
        assert_eq!(
            crate::text(&item.message),
            notification(u32::try_from(n).unwrap())
        );
    }
    assert!(items[10_000].is_final_response);
}

#[tokio::test]
async fn a_notification_over_the_message_limit_fails() {
    let server = sse_server(|| {
        let big = "x".repeat(300 << 10);
        let note = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{big}"}}}}"#
        );
        vec![
            format!("data: {note}\n\n"),
            format!("data: {}\n\n", response(1)),
        ]
    })
    .await;
    let mut req = post(server.url("/mcp"), 1);
    req.budget = 1 << 20;
    let mut s = stream(client().post(req).await.unwrap());
    let (items, err) = drain(&mut s).await;
    assert!(items.is_empty());
    let err = err.expect("error");
    assert_eq!(err.body_limit(), Some(256 << 10));
    assert!(err.to_string().contains("before the response"), "{err}");
}

#[tokio::test]
async fn the_response_still_spends_the_budget() {
    let server = sse_server(|| {
        let big = "y".repeat(20 << 10);
        let answer = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{big}"}}}}"#);
        vec![
            format!("data: {}\n\n", notification(1)),
            format!("data: {answer}\n\n"),
        ]
    })
    .await;
    let mut req = post(server.url("/mcp"), 1);
    req.budget = 16 << 10;
    let mut s = stream(client().post(req).await.unwrap());
    let (items, err) = drain(&mut s).await;
    assert_eq!(items.len(), 1);
    assert_eq!(err.expect("error").body_limit(), Some(16 << 10));
}
