//! Broken, stalled and oversized replies; connect failures.

use std::io;
use std::time::Duration;

use brain_mcp_transport::Delivery;
use bytes::Bytes;
use http::Response;

use crate::server::{Reply, TestBody, TestServer, handler};
use crate::{client, drain, notification, post, stream};

fn streaming(
    content_type: &'static str,
    tx_work: fn(tokio::sync::mpsc::Sender<Result<Bytes, io::Error>>),
) -> crate::server::Handler {
    handler(move |_| async move {
        let (tx, body) = TestBody::channel();
        tx_work(tx);
        Reply::Respond(
            Response::builder()
                .header("content-type", content_type)
                .body(body)
                .unwrap(),
        )
    })
}

#[tokio::test]
async fn a_connection_dropped_mid_body_is_an_io_error_with_unknown_delivery() {
    let server = TestServer::start(streaming("text/event-stream", |tx| {
        tokio::spawn(async move {
            let ev = format!("data: {}\n\ndata: {{\"jsonrpc\"", notification(1));
            tx.send(Ok(ev.into())).await.ok();
            tokio::time::sleep(Duration::from_millis(20)).await;
            tx.send(Err(io::Error::other("boom"))).await.ok();
        });
    }))
    .await;
    let mut s = stream(client().post(post(server.url("/mcp"), 1)).await.unwrap());
    let (items, err) = drain(&mut s).await;
    assert_eq!(items.len(), 1);
    let err = err.expect("error");
    assert!(err.is_io(), "{err}");
    assert_eq!(err.delivery(), Delivery::MaybeSent);
    assert!(s.next().await.is_none());
}

#[tokio::test]
async fn an_sse_stream_ending_without_our_response_fails_at_once() {
    let server = TestServer::start(streaming("text/event-stream", |tx| {
        tokio::spawn(async move {
            tx.send(Ok(format!("data: {}\n\n", notification(1)).into()))
                .await
                .ok();
        });
    }))
    .await;
    let mut s = stream(client().post(post(server.url("/mcp"), 1)).await.unwrap());
    let (items, err) = tokio::time::timeout(Duration::from_secs(2), drain(&mut s))
        .await
        .unwrap();
    assert_eq!(items.len(), 1);
    assert!(err.expect("error").is_stream_ended());
}

#[tokio::test]
async fn a_stalled_reply_is_abandoned_by_the_caller_deadline_and_its_connection_closed() {
    let server = TestServer::start(streaming("text/event-stream", |tx| {
        tokio::spawn(async move {
            tx.send(Ok(format!("data: {}\n\n", notification(1)).into()))
                .await
                .ok();
            // Keep the body open, sending nothing more.
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
    }))
    .await;
    let c = client();
    let work = async {
        let mut s = stream(c.post(post(server.url("/mcp"), 1)).await.unwrap());
        drain(&mut s).await
    };
    let started = std::time::Instant::now();
    assert!(
        tokio::time::timeout(Duration::from_millis(300), work)
            .await
            .is_err()
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Dropping the exchange closed the connection: the server sees it go.
    server.wait_closed(1).await;
}

#[tokio::test]
async fn an_over_budget_body_fails_while_streaming_and_drops_the_connection() {
    for content_type in ["application/json", "text/event-stream"] {
        // The server would send without end: only a bounded reader can finish.
        let server = TestServer::start(handler(move |_| async move {
            let (tx, body) = TestBody::channel();
            tokio::spawn(async move {
                let chunk = Bytes::from(vec![b' '; 64 << 10]);
                while tx.send(Ok(chunk.clone())).await.is_ok() {}
            });
            Reply::Respond(
                Response::builder()
                    .header("content-type", content_type)
                    .body(body)
                    .unwrap(),
            )
        }))
        .await;
        let mut req = post(server.url("/mcp"), 1);
        req.budget = 300 << 10;
        let mut s = stream(client().post(req).await.unwrap());
        let (_, err) = tokio::time::timeout(Duration::from_secs(5), drain(&mut s))
            .await
            .unwrap();
        let err = err.expect("error");
        assert_eq!(err.body_limit(), Some(300 << 10), "{content_type}");
        assert_eq!(err.delivery(), Delivery::MaybeSent);
        server.wait_closed(1).await;
    }
}

#[tokio::test]
async fn one_sse_event_over_its_limit_is_too_large() {
    let server = TestServer::start(streaming("text/event-stream", |tx| {
        tokio::spawn(async move {
            tx.send(Ok(Bytes::from_static(b"data: "))).await.ok();
            let chunk = Bytes::from(vec![b'x'; 8 << 10]);
            while tx.send(Ok(chunk.clone())).await.is_ok() {}
        });
    }))
    .await;
    let c = brain_mcp_transport::HttpClient::new({
        let mut c = crate::config();
        c.sse_event_limit = 32 << 10;
        c
    })
    .unwrap();
    let mut s = stream(c.post(post(server.url("/mcp"), 1)).await.unwrap());
    let (_, err) = drain(&mut s).await;
    assert_eq!(err.expect("error").body_limit(), Some(32 << 10));
}

#[tokio::test]
async fn a_refused_connection_is_not_sent() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/mcp").parse().unwrap();
    let err = client().post(post(url, 1)).await.unwrap_err();
    assert!(err.is_connect(), "{err}");
    assert_eq!(err.delivery(), Delivery::NotSent);
}

#[tokio::test]
async fn dropping_a_reply_stream_early_closes_its_connection() {
    let server = TestServer::start(streaming("text/event-stream", |tx| {
        tokio::spawn(async move {
            tx.send(Ok(format!("data: {}\n\n", notification(1)).into()))
                .await
                .ok();
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
    }))
    .await;
    let c = client();
    let mut s = stream(c.post(post(server.url("/mcp"), 1)).await.unwrap());
    assert!(!s.next().await.unwrap().unwrap().is_final_response);
    drop(s);
    server.wait_closed(1).await;
}

#[tokio::test]
async fn a_declared_length_over_budget_fails_before_reading() {
    let server = TestServer::start(handler(|_| async {
        crate::server::json(http::StatusCode::OK, vec![b' '; 4096])
    }))
    .await;
    let mut req = post(server.url("/mcp"), 1);
    req.budget = 1024;
    let mut s = stream(client().post(req).await.unwrap());
    let (_, err) = drain(&mut s).await;
    assert_eq!(err.expect("error").body_limit(), Some(1024));
}
