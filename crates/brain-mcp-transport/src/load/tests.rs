//! The counts' rules and the turn queue, without sockets.

use std::sync::Arc;

use futures_util::FutureExt;
use http::Uri;

use std::time::Duration;

use std::sync::atomic::Ordering;

use super::{CONNECT_WAIT, H2_STREAMS, Loads, Origin, Ticket, host_header, key};
use crate::CoarseTimer;

fn origin(h1: usize, connecting: usize, busy: usize, background: usize) -> Origin {
    Origin {
        h1,
        connecting,
        busy,
        background,
        ..Origin::default()
    }
}

#[test]
fn foreground_requests_get_a_connection_each() {
    assert!(origin(0, 0, 1, 0).needs_connect(false));
    assert!(origin(3, 0, 4, 0).needs_connect(false));
    assert!(origin(2, 1, 4, 0).needs_connect(false), "three for four");
    assert!(
        !origin(2, 2, 4, 0).needs_connect(false),
        "four open or opening"
    );
    assert!(
        !origin(5, 0, 4, 0).needs_connect(false),
        "idle ones will serve"
    );
}

#[test]
fn background_requests_open_one_spare_at_most() {
    assert!(
        origin(0, 0, 1, 1).needs_connect(false),
        "a DELETE alone connects"
    );
    assert!(
        origin(1, 0, 2, 1).needs_connect(false),
        "a call and a DELETE: the spare"
    );
    assert!(
        !origin(2, 0, 3, 2).needs_connect(false),
        "one call, two DELETEs: the spare is open"
    );
    assert!(
        !origin(1, 1, 2, 1).needs_connect(false),
        "the spare is opening"
    );
    assert!(
        !origin(65, 0, 80, 16).needs_connect(false),
        "64 calls hold 64, one spare"
    );
    assert!(origin(64, 0, 80, 16).needs_connect(false));
}

#[test]
fn h2_and_unknown_https_origins_share_one_connect() {
    let mut shared = origin(0, 0, 8, 0);
    shared.h2 = 1;
    assert!(!shared.needs_connect(true), "h2 multiplexes");
    assert!(
        !origin(0, 1, 8, 0).needs_connect(true),
        "the first https connect goes alone"
    );
    assert!(
        origin(1, 1, 8, 0).needs_connect(true),
        "then as http/1.1 needs"
    );
}

#[test]
fn requests_go_when_a_connection_is_free_or_may_open() {
    assert!(origin(1, 0, 0, 0).admits(false, true, false), "one idle");
    assert!(
        origin(1, 0, 1, 0).admits(false, false, false),
        "a call opens its own"
    );
    assert!(
        origin(1, 0, 1, 0).admits(false, true, false),
        "a DELETE opens the spare"
    );
    assert!(
        !origin(2, 0, 2, 1).admits(false, true, false),
        "a second DELETE waits for one of the two"
    );
    assert!(
        !origin(2, 0, 2, 2).admits(false, false, false),
        "DELETEs hold the call's connection and the spare: the next call waits"
    );
    assert!(
        origin(2, 0, 2, 1).admits(false, false, false),
        "a call beside one DELETE"
    );
    let mut connecting = origin(0, 1, 1, 0);
    connecting.pending = 1;
    assert!(
        !connecting.admits(true, false, false),
        "the first https connect goes alone"
    );
    let mut shared = origin(0, 0, 8, 8);
    shared.h2 = 1;
    assert!(shared.admits(true, true, false), "h2 takes many requests");
    shared.busy = H2_STREAMS + 50;
    shared.pending = H2_STREAMS;
    assert!(
        !shared.admits(true, false, false),
        "but no more without a response head than a server must allow at once"
    );
    shared.pending -= 1;
    assert!(
        shared.admits(true, false, false),
        "streams whose response came do not count"
    );
    assert!(
        origin(0, 0, 0, 0).admits(true, false, false),
        "https, protocol unknown: the first goes"
    );
    let mut first_out = origin(0, 0, 1, 0);
    first_out.pending = 1;
    assert!(
        !first_out.admits(true, false, false),
        "and the rest wait for its connection"
    );
    assert!(
        origin(0, 0, 3, 0).admits(true, false, false),
        "requests whose response came on a closed connection do not hold others back"
    );
}

fn timer() -> CoarseTimer {
    CoarseTimer::new(Duration::from_millis(100))
}

#[tokio::test]
async fn a_request_waits_its_turn_in_order_and_leaves_no_count_behind() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    let (https, authority) = key(&uri);
    let queued = |loads: &Loads| {
        let origins = loads.lock();
        origins[usize::from(https)]
            .get(authority)
            .map_or([0, 0], Origin::queued)
    };
    // A call's connection and the spare are open, each held by a session DELETE.
    loads.update((https, authority), |o| o.h1 = 2);
    let first = loads.turn(&uri, true, &timer).await.busy;
    let second = loads.turn(&uri, true, &timer).await.busy;
    // A third DELETE and then a call wait, in that order.
    let mut third = Box::pin(loads.turn(&uri, true, &timer));
    assert!(
        third.as_mut().now_or_never().is_none(),
        "no connection for it"
    );
    let mut call = Box::pin(loads.turn(&uri, false, &timer));
    assert!(
        call.as_mut().now_or_never().is_none(),
        "none for the call either"
    );
    assert_eq!(queued(&loads), [1, 1]);
    // One DELETE ends: the older waiter takes its connection.
    drop(first);
    let third = third.await;
    assert!(!third.overdue);
    assert!(
        call.as_mut().now_or_never().is_none(),
        "the call still waits"
    );
    drop(second);
    let call = call.await.busy;
    let third = third.busy;
    assert_eq!(queued(&loads), [0, 0]);
    // A waiter that gives up leaves the queue.
    let mut gives_up = Box::pin(loads.turn(&uri, true, &timer));
    assert!(gives_up.as_mut().now_or_never().is_none());
    assert_eq!(queued(&loads), [0, 1]);
    drop(gives_up);
    assert_eq!(queued(&loads), [0, 0]);
    // Every count gone, the origin is forgotten.
    drop((third, call));
    loads.update((https, authority), |o| o.h1 = 0);
    assert!(loads.lock()[usize::from(https)].is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_call_behind_stalled_deletes_goes_after_a_second() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    loads.update(key(&uri), |o| o.h1 = 2);
    let _deletes = (
        loads.turn(&uri, true, &timer).await,
        loads.turn(&uri, true, &timer).await,
    );
    let start = tokio::time::Instant::now();
    let call = loads.turn(&uri, false, &timer).await;
    let waited = start.elapsed();
    assert!(call.overdue, "the DELETEs never ended");
    assert!(
        waited >= CONNECT_WAIT && waited <= CONNECT_WAIT + timer.grid(),
        "{waited:?}"
    );
    let origins = loads.lock();
    let origin = origins[0].get("server:1").expect("counted");
    assert_eq!((origin.busy, origin.queued()), (3, [0, 0]));
}

#[test]
fn turns_go_to_the_oldest_requests_that_can_use_them() {
    // A DELETE holds one of two connections; a DELETE and then a call wait.
    let mut origin = origin(2, 0, 1, 1);
    let (delete, call) = (
        Arc::new(Ticket::new(1, tokio::time::Instant::now())),
        Arc::new(Ticket::new(2, tokio::time::Instant::now())),
    );
    origin.queue[1].push_back(delete.clone());
    origin.queue[0].push_back(call.clone());
    origin.hand_off(false);
    assert!(
        delete.given.load(Ordering::Acquire),
        "the older DELETE takes the free one"
    );
    assert!(
        !call.given.load(Ordering::Acquire),
        "the call may not open a third: it is neither woken nor counted"
    );
    assert_eq!(
        (origin.busy, origin.background, origin.queued()),
        (2, 2, [1, 0])
    );
    // A DELETE holds the only connection; a DELETE waits that may not open another
    // (waiting calls are not its demand), then a call that may. The DELETE does not hold
    // the call up, and once the call counts, the DELETE may open the spare.
    let mut origin = origin_with(1, 1, 1);
    let (delete, call) = (
        Arc::new(Ticket::new(1, tokio::time::Instant::now())),
        Arc::new(Ticket::new(2, tokio::time::Instant::now())),
    );
    origin.queue[1].push_back(delete.clone());
    origin.queue[0].push_back(call.clone());
    assert!(
        !origin.admits(false, true, true),
        "the DELETE alone may not"
    );
    assert!(origin.admits(false, false, true), "the call may");
    origin.hand_off(false);
    assert!(call.given.load(Ordering::Acquire));
    assert!(delete.given.load(Ordering::Acquire));
    assert_eq!(
        (origin.busy, origin.background, origin.queued()),
        (3, 2, [0, 0])
    );
}

#[test]
fn waiting_calls_count_towards_the_connections_calls_may_open() {
    // DELETEs hold all three connections and three calls wait: the calls may open
    // connections of their own (counting only calls that hold one, none could, and a
    // host at 1000 calls in flight ran on 477 connections).
    let mut origin = origin_with(3, 3, 3);
    let calls: Vec<_> = (1..=3)
        .map(|n| Arc::new(Ticket::new(n, tokio::time::Instant::now())))
        .collect();
    origin.queue[0].extend(calls.iter().cloned());
    origin.hand_off(false);
    assert!(calls[0].given.load(Ordering::Acquire));
    // A waiting DELETE still may not open one.
    let mut origin = origin_with(2, 2, 2);
    let delete = Arc::new(Ticket::new(1, tokio::time::Instant::now()));
    origin.queue[1].push_back(delete.clone());
    origin.hand_off(false);
    assert!(!delete.given.load(Ordering::Acquire));
}

fn origin_with(h1: usize, busy: usize, background: usize) -> Origin {
    origin(h1, 0, busy, background)
}

#[tokio::test]
async fn a_turn_dropped_while_it_yields_gives_its_count_back() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    loads.update(key(&uri), |o| o.h1 = 2);
    let call = loads.turn(&uri, false, &timer).await.busy;
    let delete = loads.turn(&uri, true, &timer).await.busy;
    let mut waiting = Box::pin(loads.turn(&uri, true, &timer));
    assert!(
        waiting.as_mut().now_or_never().is_none(),
        "no connection for it"
    );
    drop(delete);
    assert!(
        waiting.as_mut().now_or_never().is_none(),
        "its turn, yielding once"
    );
    drop(waiting);
    drop(call);
    loads.update(key(&uri), |o| o.h1 = 0);
    assert!(loads.lock()[0].is_empty(), "no count left behind");
}

#[tokio::test]
async fn a_newcomer_goes_behind_the_requests_waiting() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    loads.update(key(&uri), |o| o.h1 = 2);
    let first = loads.turn(&uri, true, &timer).await.busy;
    let _second = loads.turn(&uri, true, &timer).await.busy;
    let mut old = Box::pin(loads.turn(&uri, true, &timer));
    assert!(old.as_mut().now_or_never().is_none());
    // A connection frees; a DELETE arriving now must not take it from the one waiting.
    drop(first);
    let mut newcomer = Box::pin(loads.turn(&uri, true, &timer));
    assert!(
        newcomer.as_mut().now_or_never().is_none(),
        "the newcomer queues"
    );
    let old = old.await;
    assert!(!old.overdue);
    assert!(
        newcomer.as_mut().now_or_never().is_none(),
        "and still waits"
    );
}

#[tokio::test]
async fn a_parked_connect_dropped_while_it_waits_leaves_no_count() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    loads.update(key(&uri), |o| o.h1 = 1);
    let call = loads.turn(&uri, false, &timer).await.busy;
    // A connect hyper started though the one connection is enough: it parks.
    let mut parked = Box::pin(loads.connect_needed(key(&uri), None));
    assert!(parked.as_mut().now_or_never().is_none());
    assert_eq!(loads.lock()[0].get("server:1").map(|o| o.waiting), Some(1));
    drop(parked);
    drop(call);
    loads.update(key(&uri), |o| o.h1 = 0);
    assert!(loads.lock()[0].is_empty(), "no count left behind");
}

#[test]
fn the_host_header_is_what_hyper_util_would_write() {
    let host = |url: &str| {
        let uri: Uri = url.parse().unwrap();
        host_header(&uri).map(|v| v.to_str().unwrap().to_owned())
    };
    assert_eq!(
        host("http://a.example:8080/mcp").as_deref(),
        Some("a.example:8080")
    );
    assert_eq!(
        host("http://a.example:80/mcp").as_deref(),
        Some("a.example")
    );
    assert_eq!(host("http://a.example/mcp").as_deref(), Some("a.example"));
    assert_eq!(host("https://a.example:443/").as_deref(), Some("a.example"));
    assert_eq!(
        host("https://a.example:80/").as_deref(),
        Some("a.example:80")
    );
    assert_eq!(host("http://[::1]:9000/").as_deref(), Some("[::1]:9000"));
}

#[test]
fn the_host_header_is_written_only_where_http1_is_sure() {
    // To https a new connection may negotiate h2 whatever the origin's open ones speak:
    // hyper-util writes `Host` there, for HTTP/1.1 connections only.
    let uri: Uri = "https://a.example/mcp".parse().unwrap();
    for o in [origin(0, 1, 1, 0), origin(1, 0, 1, 0), origin(3, 0, 0, 0)] {
        let mut o = o;
        assert!(o.host(true, &uri).is_none());
    }
    let plain: Uri = "http://a.example/mcp".parse().unwrap();
    assert!(
        origin(0, 0, 0, 0).host(false, &plain).is_some(),
        "http is HTTP/1.1"
    );
}

/// The watchdog number of `uri`'s origin, if one runs.
fn watchdog_of(loads: &Loads, uri: &Uri) -> Option<u64> {
    let (https, authority) = key(uri);
    let origins = loads.lock();
    origins[usize::from(https)]
        .get(authority)
        .and_then(|o| o.watchdog.map(|w| w.id()))
}

/// `uri`'s origin on one h2 connection whose server holds every stream it may: each
/// request waits for its turn until it is overdue.
fn stall(loads: &Loads, uri: &Uri) {
    loads.update(key(uri), |o| {
        o.h2 = 1;
        o.busy = H2_STREAMS;
        o.pending = H2_STREAMS;
    });
}

/// Requests waiting at `uri`'s origin, and how many of them its watchdog watches.
fn watched(loads: &Loads, uri: &Uri) -> (usize, usize) {
    let (https, authority) = key(uri);
    let origins = loads.lock();
    let Some(o) = origins[usize::from(https)].get(authority) else {
        return (0, 0);
    };
    let tickets = || o.queue.iter().flatten();
    let watched = tickets()
        .filter(|t| t.watched.load(Ordering::Relaxed))
        .count();
    (tickets().count(), watched)
}

#[tokio::test(start_paused = true)]
async fn one_watchdog_ends_every_wait_then_itself() {
    let loads = Arc::new(Loads::default());
    let timer = timer();
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    stall(&loads, &uri);
    let start = tokio::time::Instant::now();
    let waits: Vec<_> = (0..8u64)
        .map(|i| {
            let (loads, uri, timer) = (loads.clone(), uri.clone(), CoarseTimer::new(timer.grid()));
            tokio::spawn(async move {
                // Queued 10 ms apart, each goes 1 s after it queued.
                tokio::time::sleep(Duration::from_millis(10 * i)).await;
                let turn = loads.turn(&uri, i % 2 == 1, &timer).await;
                (turn.overdue, start.elapsed(), turn.busy)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        watchdog_of(&loads, &uri),
        Some(1),
        "one watchdog for all of them"
    );
    assert_eq!(
        watched(&loads, &uri),
        (8, 8),
        "none armed a deadline of its own"
    );
    let mut turns = Vec::new();
    for (i, wait) in (0u64..).zip(waits) {
        let (overdue, waited, busy) = wait.await.expect("the wait ends");
        let queued = Duration::from_millis(10 * i);
        assert!(overdue, "{i}");
        assert!(waited >= queued + CONNECT_WAIT, "{i}: {waited:?}");
        assert!(
            waited <= queued + CONNECT_WAIT + Duration::from_millis(5),
            "{i}: {waited:?}"
        );
        turns.push(busy);
    }
    assert_eq!(loads.watches(), 1, "one watchdog started");
    // With nobody waiting for a whole CONNECT_WAIT, the watchdog ends.
    tokio::time::sleep(CONNECT_WAIT * 3).await;
    assert_eq!(watchdog_of(&loads, &uri), None);
    drop(turns);
}

#[test]
fn a_runtime_shut_down_with_its_watchdog_leaves_no_wait_unbounded() {
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    };
    let loads = Arc::new(Loads::default());
    let uri: Uri = "http://server:1/mcp".parse().expect("a URI");
    stall(&loads, &uri);
    let first = runtime();
    // A call queued on the first runtime starts its watchdog there.
    let (l, u) = (loads.clone(), uri.clone());
    first.spawn(async move { l.turn(&u, false, &timer()).await });
    first.block_on(async { tokio::time::sleep(Duration::from_millis(20)).await });
    assert!(watchdog_of(&loads, &uri).is_some());
    // A call from a second runtime meanwhile arms its own deadline.
    let second = runtime();
    let started = std::time::Instant::now();
    let (l, u) = (loads.clone(), uri.clone());
    let own = second.spawn(async move { l.turn(&u, false, &timer()).await });
    second.block_on(async { tokio::time::sleep(Duration::from_millis(20)).await });
    assert_eq!(watched(&loads, &uri), (2, 1));
    // The first runtime shuts down: its watchdog and its waiting call with it. The
    // second runtime's call keeps waiting on its own deadline, not released early.
    drop(first);
    assert_eq!(watchdog_of(&loads, &uri), None);
    assert_eq!(watched(&loads, &uri), (1, 0));
    let turn = second.block_on(own).expect("the wait ends");
    assert!(turn.overdue);
    let waited = started.elapsed();
    assert!(
        waited >= CONNECT_WAIT && waited < CONNECT_WAIT * 3,
        "{waited:?}"
    );
    // The second runtime's next waits get a watchdog of their own.
    let started = std::time::Instant::now();
    let again = second.block_on(loads.turn(&uri, false, &timer()));
    assert!(again.overdue);
    let waited = started.elapsed();
    assert!(
        waited >= CONNECT_WAIT && waited < CONNECT_WAIT * 3,
        "{waited:?}"
    );
    assert_eq!(loads.watches(), 2);
    drop((turn, again));
}
