//! The counts' rules and the turn queue, without sockets.

use std::sync::Arc;

use futures_util::FutureExt;
use http::Uri;

use std::time::Duration;

use super::{CONNECT_WAIT, CoarseTimer, Loads, Origin, key};

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
    assert!(origin(1, 0, 0, 0).admits(false, true), "one idle");
    assert!(
        origin(1, 0, 1, 0).admits(false, false),
        "a call opens its own"
    );
    assert!(
        origin(1, 0, 1, 0).admits(false, true),
        "a DELETE opens the spare"
    );
    assert!(
        !origin(2, 0, 2, 1).admits(false, true),
        "a second DELETE waits for one of the two"
    );
    assert!(
        !origin(2, 0, 2, 2).admits(false, false),
        "DELETEs hold the call's connection and the spare: the next call waits"
    );
    assert!(
        origin(2, 0, 2, 1).admits(false, false),
        "a call beside one DELETE"
    );
    assert!(
        !origin(0, 1, 1, 0).admits(true, false),
        "the first https connect goes alone"
    );
    let mut shared = origin(0, 0, 8, 8);
    shared.h2 = 1;
    assert!(shared.admits(true, true), "h2 takes every request");
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
            .map_or([0, 0], |o| o.queued)
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
    // One DELETE ends: the oldest waiter takes its connection.
    drop(first);
    let third = third.await;
    assert!(!third.overdue);
    assert!(
        call.as_mut().now_or_never().is_none(),
        "the call still waits"
    );
    drop(second);
    let call = call.await.busy;
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
    assert_eq!((origin.busy, origin.queued), (3, [0, 0]));
}
