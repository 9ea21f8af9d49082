//! Connection reuse and the stale pooled connection race.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use brain_mcp_transport::{Delivery, Expect, RequestId};
use http::StatusCode;

use crate::server::{Reply, TestServer, handler, json, sse, status};
use crate::{client, exchange, notification, notify, post, request_body, response};

#[tokio::test]
async fn sequential_exchanges_reuse_one_connection() {
    let server = TestServer::start(handler(|seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        match v["id"].as_i64() {
            None => status(StatusCode::ACCEPTED),
            Some(id) if id % 2 == 0 => json(StatusCode::OK, response(id)),
            Some(id) => sse(format!(
                "data: {}\n\ndata: {}\n\n",
                notification(1),
                response(id)
            )),
        }
    }))
    .await;
    let c = client();
    for id in 1..=6 {
        let items = exchange(&c, post(server.url("/mcp"), id)).await;
        assert!(items.last().unwrap().is_final_response);
        c.post(notify(server.url("/mcp"))).await.unwrap();
    }
    assert_eq!(server.seen().len(), 12);
    assert_eq!(
        server.accepted(),
        1,
        "every exchange should reuse the first connection"
    );
}

/// On two workers the connection's task often has not yet seen its response end when
/// the reader drops it: the connection must still go back idle, not be closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_read_to_its_end_gives_its_connection_back_on_a_busy_runtime() {
    let server = TestServer::start(handler(|seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        match v["id"].as_i64() {
            None => status(StatusCode::ACCEPTED),
            Some(id) => json(StatusCode::OK, response(id)),
        }
    }))
    .await;
    let c = client();
    for id in 1..=200 {
        let items = exchange(&c, post(server.url("/mcp"), id)).await;
        assert!(items.last().unwrap().is_final_response);
        c.post(notify(server.url("/mcp"))).await.unwrap();
    }
    assert_eq!(
        server.accepted(),
        1,
        "every exchange reuses the first connection"
    );
}

/// The second request on each connection is read and then the connection is closed
/// without a reply: what a client sees when a server closes an idle keep-alive
/// connection just as the request goes out.
async fn closing_server() -> TestServer {
    TestServer::start(handler(|seen| async move {
        if seen.nth_on_conn == 2 {
            return Reply::Close;
        }
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        json(StatusCode::OK, response(v["id"].as_i64().unwrap()))
    }))
    .await
}

#[tokio::test]
async fn an_idempotent_request_on_a_stale_connection_is_resent_once() {
    let server = closing_server().await;
    let c = client();
    exchange(&c, post(server.url("/mcp"), 1)).await;
    let items = exchange(&c, post(server.url("/mcp"), 2)).await;
    assert_eq!(crate::text(&items[0].message), response(2));
    assert_eq!(server.accepted(), 2);
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_tools_call_on_a_stale_connection_is_not_resent_and_may_have_been_sent() {
    let server = closing_server().await;
    let c = client();
    exchange(&c, post(server.url("/mcp"), 1)).await;
    let mut call = post(server.url("/mcp"), 2);
    call.body = request_body(2, "tools/call").into();
    call.expect = Expect::Response(RequestId::Number(2));
    call.idempotent = false;
    let err = c.post(call).await.unwrap_err();
    assert!(err.is_io(), "{err}");
    assert_eq!(err.delivery(), Delivery::MaybeSent);
    assert_eq!(server.seen().len(), 2, "never resent");
}

#[tokio::test]
async fn connections_closed_by_the_server_while_idle_are_not_reused() {
    let server = TestServer::start(handler(|_| async { json(StatusCode::OK, response(1)) })).await;
    let c = client();
    exchange(&c, post(server.url("/mcp"), 1)).await;
    server.kill_connections();
    server.wait_closed(1).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut call = post(server.url("/mcp"), 1);
    call.idempotent = false;
    exchange(&c, call).await;
    assert_eq!(server.accepted(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_calls_opens_one_connection_each() {
    // Slow answers, so every call of the burst is in flight at once: each gets a
    // connection of its own, and no more are opened (no connect races a connection
    // coming back).
    let server = TestServer::start(handler(|seen| async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        json(StatusCode::OK, response(v["id"].as_i64().unwrap()))
    }))
    .await;
    let c = client();
    for round in 0..2 {
        let mut tasks = Vec::new();
        for id in 1..=16 {
            let (c, u) = (c.clone(), server.url("/mcp"));
            tasks.push(tokio::spawn(async move {
                let mut call = post(u, id);
                call.idempotent = false;
                exchange(&c, call).await
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(server.accepted(), 16, "round {round}");
        assert_eq!(c.pool_stats().connections_opened, 16, "round {round}");
    }
}

#[tokio::test]
async fn a_connection_that_died_idle_is_never_handed_out() {
    let server = TestServer::start(handler(|_| async { json(StatusCode::OK, response(1)) })).await;
    let c = client();
    exchange(&c, post(server.url("/mcp"), 1)).await;
    assert_eq!(c.pool_stats().connections_open, 1);
    server.kill_connections();
    // Once the pool has seen it close, a call that may not be resent goes out on a new
    // connection: the dead one is not used.
    let waited = tokio::time::timeout(Duration::from_secs(5), async {
        while c.pool_stats().connections_open > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the pool never saw the connection close");
    let mut call = post(server.url("/mcp"), 1);
    call.idempotent = false;
    exchange(&c, call).await;
    assert_eq!(server.accepted(), 2);
    assert_eq!(c.pool_stats().connections_opened, 2);
}

#[tokio::test]
async fn an_idle_connection_closes_after_the_idle_timeout_and_a_busy_one_does_not() {
    let server = TestServer::start(handler(|seen| async move {
        let v: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        let id = v["id"].as_i64().unwrap();
        if id == 2 {
            tokio::time::sleep(Duration::from_millis(900)).await;
        }
        json(StatusCode::OK, response(id))
    }))
    .await;
    let mut config = crate::config();
    config.pool_idle_timeout = Duration::from_millis(300);
    let c = brain_mcp_transport::HttpClient::new(config).unwrap();
    // A request longer than the idle timeout keeps its connection.
    exchange(&c, post(server.url("/mcp"), 2)).await;
    assert_eq!(c.pool_stats().connections_open, 1);
    // Idle, it is closed within the timeout and a quarter of it (the reaper's round).
    let started = std::time::Instant::now();
    server.wait_closed(1).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(800), "closed after {took:?}");
    // The pool counts it closed as its task ends, just after the socket closed.
    let counted = tokio::time::timeout(Duration::from_secs(1), async {
        while c.pool_stats().connections_open > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    assert!(counted.await.is_ok());
    assert_eq!(server.accepted(), 1);
}

/// A server on a thread of its own that hands every connection it accepts to `serve`
/// (on a thread each); its URL and the count of connections accepted.
fn raw_server(
    serve: impl Fn(std::net::TcpStream, usize) + Send + Sync + 'static,
) -> (http::Uri, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let (count, serve) = (accepted.clone(), Arc::new(serve));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream, n));
        }
    });
    (url.parse().unwrap(), accepted)
}

/// Reads one request head from `s` and its `content-length` body; false at the end.
fn read_request(s: &mut std::net::TcpStream, body: bool) -> bool {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return false,
        }
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    !body || s.read_exact(&mut vec![0; len]).is_ok()
}

/// Answers every request on `s` with a JSON response to id 1.
fn answer(mut s: std::net::TcpStream) {
    while read_request(&mut s, true) {
        let body = response(1);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if s.write_all(format!("{head}{body}").as_bytes()).is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_server_closing_every_connection_at_once_gets_two_connects_a_request_at_most() {
    // Closed at once, or with a 408 written first: a fresh connection that is not ready
    // fails its request as unsent, and the client sends it once more, no more. (Whether
    // hyper sees the close before the request is written is a race: tried many times.)
    for greeting in [
        &b""[..],
        b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\r\n",
    ] {
        let (url, accepted) = raw_server(move |mut s, _| drop(s.write_all(greeting)));
        let c = client();
        for round in 1..=30 {
            let req = brain_mcp_transport::FetchRequest::get(url.clone(), Duration::from_secs(2));
            let started = std::time::Instant::now();
            drop(c.fetch(req).await);
            let n = accepted.swap(0, Ordering::SeqCst);
            let took = started.elapsed();
            assert!(n <= 2, "round {round}: {n} connections in {took:?}");
        }
    }
}

#[tokio::test]
async fn a_connection_still_writing_its_request_body_is_not_made_idle() {
    // The first connection's server answers 401 after the head of a large POST and
    // reads no more: its connection is never ready again, and is not reused.
    let (url, _) = raw_server(|mut s, n| {
        if n > 1 {
            return answer(s);
        }
        if read_request(&mut s, false) {
            let head = "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n";
            drop(s.write_all(head.as_bytes()));
            std::thread::sleep(Duration::from_secs(10));
        }
    });
    let c = client();
    let body = bytes::Bytes::from(vec![b' '; 32 << 20]);
    let post = brain_mcp_transport::FetchRequest::post(
        url.clone(),
        "application/json",
        body,
        Duration::from_secs(5),
    );
    let answered = c.fetch(post).await.expect("the 401");
    assert_eq!(answered.status, 401);
    let started = std::time::Instant::now();
    let get = brain_mcp_transport::FetchRequest::get(url, Duration::from_secs(5));
    assert_eq!(c.fetch(get).await.expect("the GET").status, 200);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "the GET took {took:?}");
    // The first connection's task may never end (hyper still writing its body): the
    // pool counts it closed as it drops it.
    assert_eq!(c.pool_stats().connections_open, 1);
}

#[test]
fn a_runtime_shut_down_under_its_connections_leaves_none_counted() {
    let (url, accepted) = raw_server(|s, _| answer(s));
    let c = client();
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let first = runtime();
    first.block_on(exchange(&c, post(url.clone(), 1)));
    assert_eq!(c.pool_stats().connections_open, 1);
    // Its connection task is dropped, not ended: the connection is counted closed all
    // the same, and the next request does not wait behind it.
    drop(first);
    assert_eq!(c.pool_stats().connections_open, 0);
    let started = std::time::Instant::now();
    runtime().block_on(exchange(&c, post(url, 1)));
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(500),
        "the request took {took:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}
