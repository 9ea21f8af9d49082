//! SEP-1699: resuming a broken handshake-era stream with GET and Last-Event-ID.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use brain_mcp_transport::Header;
use http::{Method, StatusCode};

use crate::server::{TestServer, handler, sse, status};
use crate::{client, drain, exchange, notification, post, response, stream};

/// POST: a priming event, `retry`, one notification with an id, then the connection
/// closes. GET with the right Last-Event-ID: the response.
async fn polling_server(gets_fail: bool) -> (TestServer, Arc<AtomicUsize>) {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let server = TestServer::start(handler(move |seen| {
        let g = g.clone();
        async move {
            if seen.method == Method::POST {
                return sse(format!(
                    "id: e1\nretry: 150\ndata:\n\nid: e2\ndata: {}\n\n",
                    notification(1)
                ));
            }
            g.fetch_add(1, Ordering::SeqCst);
            if gets_fail {
                return status(StatusCode::METHOD_NOT_ALLOWED);
            }
            assert_eq!(seen.headers["last-event-id"], "e2");
            sse(format!("id: e3\ndata: {}\n\n", response(1)))
        }
    }))
    .await;
    (server, gets)
}

fn handshake_post(server: &TestServer) -> brain_mcp_transport::PostRequest {
    let mut req = post(server.url("/mcp"), 1);
    req.resume_attempts = 2;
    req.headers = vec![
        Header::sensitive("mcp-session-id", "s-7"),
        Header::new("mcp-protocol-version", "2025-11-25"),
        Header::new("mcp-method", "tools/call"),
    ];
    req.resume_headers = vec![
        Header::sensitive("mcp-session-id", "s-7"),
        Header::new("mcp-protocol-version", "2025-11-25"),
    ];
    req
}

#[tokio::test]
async fn a_closed_stream_with_event_ids_resumes_after_retry() {
    let (server, gets) = polling_server(false).await;
    let started = Instant::now();
    let items = exchange(&client(), handshake_post(&server)).await;
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "retry honoured"
    );
    assert_eq!(items.len(), 2);
    assert_eq!(crate::text(&items[0].message), notification(1));
    assert!(items[1].is_final_response);
    assert_eq!(items[1].event_id.as_deref(), Some("e3"));
    assert_eq!(gets.load(Ordering::SeqCst), 1);
    let get = &server.seen()[1];
    assert_eq!(get.method, Method::GET);
    assert_eq!(get.headers["accept"], "text/event-stream");
    assert_eq!(get.headers["mcp-session-id"], "s-7");
    assert_eq!(get.headers["mcp-protocol-version"], "2025-11-25");
    assert!(get.headers.get("mcp-method").is_none());
    assert!(get.body.is_empty());
}

#[tokio::test]
async fn resume_attempts_are_bounded() {
    let (server, gets) = polling_server(true).await;
    let mut s = stream(client().post(handshake_post(&server)).await.unwrap());
    let (items, err) = drain(&mut s).await;
    assert_eq!(items.len(), 1);
    assert!(err.expect("error").is_stream_ended());
    assert_eq!(gets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn no_resume_budget_means_no_resume() {
    let (server, gets) = polling_server(false).await;
    let mut req = handshake_post(&server);
    req.resume_attempts = 0;
    let mut s = stream(client().post(req).await.unwrap());
    let (_, err) = drain(&mut s).await;
    let err = err.expect("error");
    assert!(err.is_stream_ended());
    assert!(err.to_string().contains("resuming is off"), "{err}");
    assert_eq!(gets.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stream_without_event_ids_cannot_resume() {
    let server = TestServer::start(handler(|_| async {
        sse(format!("data: {}\n\n", notification(1)))
    }))
    .await;
    let mut s = stream(client().post(handshake_post(&server)).await.unwrap());
    let (_, err) = drain(&mut s).await;
    let err = err.expect("error");
    assert!(err.is_stream_ended());
    assert!(err.to_string().contains("no event id"));
    assert_eq!(server.seen().len(), 1);
}
