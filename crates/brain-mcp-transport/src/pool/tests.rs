//! The pool's rules, without a network: who may open a connection, and who gets what
//! is free, in which order.

use std::time::Duration;

use http::Uri;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::conn::host_header;
use super::{BACKGROUND_SPARE, Held, Origin, Rules, Waiter};

const RULES: Rules = Rules {
    timeout: Duration::from_secs(4),
    max_idle: usize::MAX,
};

/// An origin with `h1` open HTTP/1.1 connections (none idle), `connecting` connects
/// under way, `busy` requests holding one, `background` of them background.
fn origin(h1: usize, connecting: usize, busy: usize, background: usize) -> Origin {
    Origin {
        h1,
        connecting,
        busy,
        background,
        ..Origin::default()
    }
}

/// Queues a request; returns what it will be handed.
fn queue(o: &mut Origin, background: bool) -> oneshot::Receiver<Held> {
    let (tx, rx) = oneshot::channel();
    o.next += 1;
    o.queue.push_back(Waiter {
        id: o.next,
        background,
        overdue: false,
        tx,
    });
    o.waiting_calls += usize::from(!background);
    rx
}

fn dispatch(o: &mut Origin) {
    let mut stale = Vec::new();
    o.dispatch(false, Instant::now(), RULES, &mut stale);
}

fn connects(rx: &mut oneshot::Receiver<Held>) -> bool {
    matches!(rx.try_recv(), Ok(Held::Connect))
}

#[test]
fn foreground_requests_get_a_connection_each() {
    // Every connection held by a call: the next call connects.
    for n in 0..5 {
        let o = origin(n, 0, n, 0);
        assert!(o.may_connect(false, false, false, false), "{n} held");
    }
    // A connect under way for a call that holds it counts as one of its connections.
    let o = origin(1, 1, 2, 0);
    assert!(o.may_connect(false, false, false, false));
}

#[test]
fn background_requests_open_one_spare_at_most() {
    // One call in flight: its DELETE may open the spare.
    assert!(origin(1, 0, 1, 0).may_connect(false, true, false, false));
    // The spare is held by a DELETE: another DELETE waits.
    assert!(!origin(2, 0, 2, 1).may_connect(false, true, false, false));
    // Nothing in flight, no connection: a DELETE opens one (the spare).
    assert!(origin(0, 0, 0, 0).may_connect(false, true, false, false));
    assert_eq!(BACKGROUND_SPARE, 1);
}

#[test]
fn a_call_behind_deletes_waits_until_it_is_overdue() {
    // Two DELETEs hold both connections (a call's and the spare): the next call waits,
    // for CONNECT_WAIT at most, then opens one.
    let o = origin(2, 0, 2, 2);
    assert!(!o.may_connect(false, false, false, false));
    assert!(o.may_connect(false, false, true, false));
    // One DELETE holds the only connection: the call takes the spare at once.
    assert!(origin(1, 0, 1, 1).may_connect(false, false, false, false));
}

#[test]
fn an_https_origin_of_unknown_protocol_gets_one_connect_first() {
    let o = origin(0, 1, 1, 0);
    assert!(!o.may_connect(true, false, false, false));
    assert!(!o.may_connect(true, false, true, false), "not even overdue");
    // Plain http has no protocol to learn.
    assert!(o.may_connect(false, false, false, false));
    // Known to speak HTTP/1.1: connects go as needed.
    assert!(origin(1, 1, 2, 0).may_connect(true, false, false, false));
}

#[test]
fn waiting_requests_are_served_in_order_of_arrival_and_counted() {
    // Two DELETEs hold both connections; a DELETE and then a call wait.
    let mut o = origin(2, 0, 2, 2);
    let mut delete = queue(&mut o, true);
    let mut call = queue(&mut o, false);
    dispatch(&mut o);
    assert!(delete.try_recv().is_err() && call.try_recv().is_err());
    // One DELETE ends (its connection closed): the call may connect, the waiting DELETE
    // may not (the other DELETE still holds the spare); the call does not wait behind it.
    o.h1 -= 1;
    o.untake(true);
    dispatch(&mut o);
    assert!(connects(&mut call));
    assert!(delete.try_recv().is_err());
    assert_eq!((o.busy, o.background, o.connecting), (2, 1, 1));
    assert_eq!((o.queue.len(), o.waiting_calls), (1, 0));
}

#[test]
fn an_overdue_request_goes() {
    let mut o = origin(2, 0, 2, 2);
    let mut call = queue(&mut o, false);
    dispatch(&mut o);
    assert!(call.try_recv().is_err());
    o.queue[0].overdue = true;
    dispatch(&mut o);
    assert!(connects(&mut call));
}

#[test]
fn a_request_handed_something_it_no_longer_waits_for_gives_it_back() {
    let mut o = origin(0, 0, 0, 0);
    let call = queue(&mut o, false);
    drop(call);
    dispatch(&mut o);
    assert_eq!((o.busy, o.connecting, o.queue.len()), (0, 0, 0));
    assert!(o.is_empty());
}

#[test]
fn a_connect_given_back_leaves_no_count_behind() {
    let mut o = origin(0, 0, 0, 0);
    let mut stale = Vec::new();
    let held = o.grant(
        false,
        (true, false, false),
        Instant::now(),
        RULES,
        &mut stale,
    );
    assert!(matches!(held, Some(Held::Connect)));
    assert_eq!((o.busy, o.background, o.connecting), (1, 1, 1));
    o.give_back(
        Held::Connect,
        true,
        super::Progress::Unwritten,
        RULES,
        &mut stale,
    );
    assert!(o.is_empty());
}

#[test]
fn the_host_header_is_what_hyper_util_would_write() {
    let cases = [
        ("http://example.test/mcp", "example.test"),
        ("http://example.test:80/mcp", "example.test"),
        ("http://example.test:8080/mcp", "example.test:8080"),
        ("https://example.test:443/mcp", "example.test"),
        ("https://example.test:8443/mcp", "example.test:8443"),
        ("http://127.0.0.1:3000/mcp", "127.0.0.1:3000"),
        ("http://[::1]:3000/mcp", "[::1]:3000"),
    ];
    for (uri, want) in cases {
        let uri: Uri = uri.parse().unwrap();
        assert_eq!(host_header(&uri).unwrap(), want, "{uri}");
    }
}

#[test]
fn an_overdue_request_goes_past_requests_that_may_not() {
    // Two DELETEs hold both connections; a call, a DELETE and an overdue DELETE wait.
    let mut o = origin(2, 0, 2, 2);
    let mut call = queue(&mut o, false);
    let mut delete = queue(&mut o, true);
    let mut late = queue(&mut o, true);
    o.queue[2].overdue = true;
    o.overdue = 1;
    dispatch(&mut o);
    assert!(call.try_recv().is_err() && delete.try_recv().is_err());
    assert!(connects(&mut late));
    assert_eq!((o.queue.len(), o.overdue, o.waiting_calls), (2, 0, 1));
}

/// A client's pool, and its only origin's counts: busy, background, connecting,
/// waiting (none of it connects: a lease that may connect does so only when sent).
fn pool() -> (crate::HttpClient, Uri) {
    let config = crate::ClientConfig::default().with_native_roots(false);
    let client = crate::HttpClient::new(config).unwrap();
    (client, "http://127.0.0.1:9/mcp".parse().unwrap())
}

/// What the pool knows of connection `id`: direct, unlogged, not counted open.
fn conn_info(id: u64) -> super::Info {
    super::Info {
        id,
        proxied: false,
        used: None,
        host: None,
        counted: Default::default(),
    }
}

fn counts(pool: &super::Pool) -> Option<(usize, usize, usize, usize)> {
    let origins = pool.lock();
    let o = origins[0].get("127.0.0.1:9")?;
    Some((o.busy, o.background, o.connecting, o.queue.len()))
}

#[tokio::test]
async fn a_request_dropped_while_it_waits_leaves_no_count_behind() {
    let (client, uri) = pool();
    let (pool, timer) = (&client.inner.pool, client.background_timer());
    let call = pool.checkout(&uri, false, timer).await;
    let delete = pool.checkout(&uri, true, timer).await;
    assert_eq!(counts(pool), Some((2, 1, 2, 0)), "a call and the spare");
    // A second DELETE may not open a third connection: it waits, and gives up.
    let waited = tokio::time::timeout(Duration::from_millis(50), pool.checkout(&uri, true, timer));
    assert!(waited.await.is_err());
    assert_eq!(counts(pool), Some((2, 1, 2, 0)), "it left the queue");
    drop((call, delete));
    assert_eq!(counts(pool), None, "the origin is forgotten");
}

#[tokio::test(start_paused = true)]
async fn a_request_that_waited_a_second_may_open_a_connection() {
    let (client, uri) = pool();
    let (pool, timer) = (&client.inner.pool, client.background_timer());
    let started = Instant::now();
    let _held = [
        pool.checkout(&uri, false, timer).await,
        pool.checkout(&uri, true, timer).await,
    ];
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "a call and the spare go at once"
    );
    // A DELETE more waits behind them (say, DELETEs a server never answers), for a
    // second; then it may open a connection.
    let late = pool.checkout(&uri, true, timer).await;
    let waited = started.elapsed();
    assert!(matches!(late.held, Held::Connect));
    assert!(
        waited >= super::CONNECT_WAIT && waited < super::CONNECT_WAIT * 2,
        "{waited:?}"
    );
    assert_eq!(counts(pool), Some((3, 2, 3, 0)));
}

#[tokio::test]
async fn an_overdue_request_takes_a_stream_on_a_full_h2_connection() {
    use hyper_util::rt::{TokioExecutor, TokioIo};

    // An h2 connection to nowhere (a client handshake writes its preface and returns).
    let (io, _server) = tokio::io::duplex(1 << 16);
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .unwrap();
    tokio::spawn(conn);
    let info = conn_info(1);
    // Every stream waits for a head the server never sends.
    let mut o = origin(0, 0, 0, 0);
    o.h2 = Some(super::Shared {
        sender,
        info,
        pending: super::H2_STREAMS,
        active: super::H2_STREAMS,
        idle_since: Instant::now(),
    });
    let mut call = queue(&mut o, false);
    let mut delete = queue(&mut o, true);
    dispatch(&mut o);
    assert!(call.try_recv().is_err() && delete.try_recv().is_err());
    // The DELETE waited a second: it goes past the call that has not, beyond the limit.
    o.queue[1].overdue = true;
    o.overdue = 1;
    dispatch(&mut o);
    assert!(call.try_recv().is_err());
    assert!(matches!(
        delete.try_recv(),
        Ok(Held::Conn(super::Sender::H2(_), _))
    ));
    let h2 = o.h2.as_ref().unwrap();
    assert_eq!(
        (h2.pending, h2.active),
        (super::H2_STREAMS + 1, super::H2_STREAMS + 1)
    );
    assert_eq!((o.queue.len(), o.overdue), (1, 0));
}

#[tokio::test]
async fn a_connection_never_written_on_stays_idle() {
    use hyper_util::rt::TokioIo;

    // An HTTP/1.1 connection to a peer that never writes, ready for a request.
    let (io, _server) = tokio::io::duplex(1 << 16);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut sender = sender;
    sender.ready().await.unwrap();
    let info = conn_info(1);
    let mut o = origin(1, 0, 0, 0);
    let since = Instant::now();
    o.idle.push(super::Idle {
        sender,
        info,
        since,
    });
    // A request waits, and leaves just as the connection is handed to it: nothing was
    // written on it, so it goes back to the idle list, not closed as stale.
    let call = queue(&mut o, false);
    drop(call);
    let mut stale = Vec::new();
    o.dispatch(false, Instant::now(), RULES, &mut stale);
    assert!(stale.is_empty());
    assert_eq!((o.idle.len(), o.busy, o.queue.len()), (1, 0, 0));
    // A connection just opened, its task yet to run (not ready yet), given back by a
    // lease dropped before it wrote anything: idle too.
    let (io, _server) = tokio::io::duplex(1 << 16);
    let (sender, _conn) = hyper::client::conn::http1::handshake::<_, super::Body>(TokioIo::new(io))
        .await
        .unwrap();
    let info = conn_info(2);
    o.h1 += 1;
    o.take(false);
    let held = Held::Conn(super::Sender::H1(sender), info);
    o.give_back(held, false, super::Progress::Unwritten, RULES, &mut stale);
    assert!(stale.is_empty());
    assert_eq!((o.idle.len(), o.busy), (2, 0));
}

#[tokio::test]
async fn a_connection_read_to_the_end_goes_idle_before_its_task_says_it_is_ready() {
    use super::Progress;
    use hyper_util::rt::TokioIo;
    // Each connection is open and its task has not run (hyper says "not ready"): what
    // a lease that just read its body's last frame sees on a busy runtime.
    let mut kept = Vec::new();
    for (id, progress, idle) in [
        (1, Progress::Unwritten, true),
        (2, Progress::Written, false),
        (3, Progress::Headed, false),
        (4, Progress::Read, true),
    ] {
        let (io, server) = tokio::io::duplex(1 << 16);
        let (sender, conn) =
            hyper::client::conn::http1::handshake::<_, super::Body>(TokioIo::new(io))
                .await
                .unwrap();
        kept.push((server, conn));
        assert!(!sender.is_ready() && !sender.is_closed());
        let info = conn_info(id);
        let mut o = origin(0, 0, 0, 0);
        o.h1 += 1;
        o.take(false);
        let mut stale = Vec::new();
        let held = Held::Conn(super::Sender::H1(sender), info);
        o.give_back(held, false, progress, RULES, &mut stale);
        assert_eq!(
            (o.idle.len(), stale.len()),
            if idle { (1, 0) } else { (0, 1) },
            "{progress:?}"
        );
        assert_eq!(o.busy, 0, "{progress:?}");
    }
}

#[tokio::test]
async fn a_reply_marks_its_connection_read_at_its_last_frame_only() {
    use super::{Lease, Progress, Reply};
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (client, uri) = pool();
    let (pool, timer) = (&client.inner.pool, client.background_timer());
    // Read whole, read in part, an empty body seen ended without a poll (`drain`'s
    // shortcut), and a body cut short by the server (an error, then hyper's end).
    for (body, frames, read) in [
        ("ok", 2, true),
        ("ok", 1, false),
        ("", 0, true),
        ("cut", 4, false),
    ] {
        let (io, mut server) = tokio::io::duplex(1 << 16);
        let (sender, conn) =
            hyper::client::conn::http1::handshake::<_, super::Body>(TokioIo::new(io))
                .await
                .unwrap();
        tokio::spawn(conn);
        let cut = body == "cut";
        // A cut body promises more than it sends, and its connection then closes.
        let length = if cut { 10 } else { body.len() };
        let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {length}\r\n\r\n{body}");
        tokio::spawn(async move {
            let mut request = [0u8; 1024];
            let _ = server.read(&mut request).await;
            server.write_all(reply.as_bytes()).await.unwrap();
            if !cut {
                std::future::pending::<()>().await;
            }
        });
        let info = conn_info(1);
        let held = Held::Conn(super::Sender::H1(sender), info);
        let mut lease = Lease::new(pool.clone(), (false, "127.0.0.1:9"), false, held);
        let request = http::Request::get(uri.clone())
            .body(super::Body::default())
            .unwrap();
        let response = lease.send(&uri, request, timer).await.unwrap();
        lease.headed();
        let mut reply = Reply::new(response.into_body(), Some(lease));
        if frames == 0 {
            assert!(reply.ended(), "an empty body has ended before any poll");
        }
        if cut {
            // The data, the error, then whatever hyper says after it.
            let mut errors = 0;
            for _ in 0..frames {
                match reply.frame().await {
                    Some(Err(_)) => errors += 1,
                    Some(Ok(_)) => {}
                    None => break,
                }
            }
            assert_eq!(errors, 1, "a cut body fails once");
        } else {
            for i in 0..frames {
                // The data, then the end.
                let frame = reply.frame().await;
                assert_eq!(frame.is_none(), i == 1, "frame {i} of {body:?}");
            }
        }
        let progress = reply.lease.as_ref().unwrap().progress();
        let expected = if read {
            Progress::Read
        } else {
            Progress::Headed
        };
        assert_eq!(progress, expected, "{body:?} read in {frames} frame(s)");
    }
}
