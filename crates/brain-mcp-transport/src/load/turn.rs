//! Requests waiting for their turn before hyper sees them (see the module docs of
//! `load`): a queue per origin and kind, served in order by a hand-off.
//!
//! A request that may not go yet takes a [`Ticket`] at the back of its kind's queue.
//! Whenever the counts change ([`Loads::update`]), the origin hands turns to the oldest
//! tickets that may go: it counts each as holding a connection and wakes it. So no
//! wake-up goes to a request that cannot use it, no newcomer takes a turn from one that
//! waited, and background requests (session DELETEs) are not starved by a stream of
//! calls.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::Poll;

use futures_util::task::AtomicWaker;
use http::{HeaderValue, Uri};
use tokio::runtime::{Handle, Id};
use tokio::time::Instant;

use super::{Busy, CONNECT_WAIT, Loads, Origin, key};
use crate::CoarseTimer;

/// A request's place in its origin's queue.
#[derive(Debug)]
pub(super) struct Ticket {
    /// Its place among every ticket of the origin: older tickets have smaller ones.
    order: u64,
    /// When it queued.
    pub(super) queued: Instant,
    /// Set (under the origins' lock) when the origin handed it a turn and counted it.
    pub(super) given: AtomicBool,
    /// The turn is an HTTP/1.1 connection another request just freed, which may still be
    /// on its way back to hyper's pool.
    freed: AtomicBool,
    /// The turn came because it waited [`CONNECT_WAIT`].
    overdue: AtomicBool,
    /// Its origin's watchdog bounds its wait (set under the origins' lock when it
    /// queues); otherwise it arms a deadline of its own.
    pub(super) watched: AtomicBool,
    /// The waiting request's task, woken when it is given its turn.
    woken: AtomicWaker,
}

impl Ticket {
    /// The ticket taken `order`-th at its origin, at `queued`.
    pub(super) fn new(order: u64, queued: Instant) -> Self {
        Self {
            order,
            queued,
            given: AtomicBool::new(false),
            freed: AtomicBool::new(false),
            overdue: AtomicBool::new(false),
            watched: AtomicBool::new(false),
            woken: AtomicWaker::new(),
        }
    }

    /// Hands it a turn, already counted: `overdue` when it waited too long.
    pub(super) fn give(&self, overdue: bool) {
        self.overdue.store(overdue, Ordering::Release);
        self.given.store(true, Ordering::Release);
        self.woken.wake();
    }
}

/// A request's turn to go to hyper, from [`Loads::turn`].
pub(crate) struct Turn {
    /// Counts the request as holding a connection until dropped.
    pub(crate) busy: Busy,
    /// It waited [`CONNECT_WAIT`] without a connection: hyper's connect for it goes at
    /// once.
    pub(crate) overdue: bool,
    /// The request's `Host` header, when it is sure to go over HTTP/1.1 (plain `http`;
    /// see [`Origin::host`]).
    pub(crate) host: Option<HeaderValue>,
}

impl Origin {
    /// Counts one more request of `kind` (0 foreground, 1 background) as holding a
    /// connection.
    pub(super) fn take(&mut self, kind: usize) {
        self.busy += 1;
        self.background += kind;
        self.pending += 1;
    }

    /// Gives back what [`Self::take`] counted for a request of `kind`, its response head
    /// still `pending` (1) or come (0).
    pub(super) fn give_back(&mut self, kind: usize, pending: usize) {
        self.busy = self.busy.saturating_sub(1);
        self.background = self.background.saturating_sub(kind);
        self.pending = self.pending.saturating_sub(pending);
    }

    /// Gives turns to the oldest waiting requests that may go now, calls and background
    /// requests alike in order of arrival; a request that may not go yet (a background
    /// one's turn is stricter than a call's) does not hold up a younger one that may.
    pub(super) fn hand_off(&mut self, https: bool) {
        loop {
            let ready = |kind: usize| {
                let front = self.queue[kind].front()?;
                self.admits(https, kind == 1, true).then_some(front.order)
            };
            let kind = match (ready(0), ready(1)) {
                (Some(call), Some(background)) => usize::from(background < call),
                (Some(_), None) => 0,
                (None, Some(_)) => 1,
                (None, None) => return,
            };
            let Some(ticket) = self.queue[kind].pop_front() else {
                return;
            };
            let freed = self.h2 == 0 && self.h1 + self.connecting > self.busy;
            self.take(kind);
            ticket.freed.store(freed, Ordering::Release);
            ticket.give(false);
        }
    }
}

impl Loads {
    /// Waits until a request to `uri` may go to hyper (see [`Origin::admits`]), then
    /// counts it as holding a connection until the returned guard is dropped. A
    /// `background` request uses the open connections in turn with the others and makes
    /// one open only within [`BACKGROUND_SPARE`](super::BACKGROUND_SPARE).
    ///
    /// A request goes at once only when none of its kind waits. One handed an HTTP/1.1
    /// connection another request just freed lets the runtime run once more before it
    /// goes: the connection goes back to hyper's pool from a task of hyper's own, and a
    /// request that looks there first makes hyper start a connect for nothing. One that
    /// waited [`CONNECT_WAIT`] (a call behind DELETEs a server never answers, say) goes
    /// anyway, [`Turn::overdue`]: its origin's watchdog (below) says so, or,
    /// for a request queued from another runtime than the watchdog's, its own deadline
    /// on `timer`.
    pub(crate) async fn turn(
        self: &Arc<Self>,
        uri: &Uri,
        background: bool,
        timer: &CoarseTimer,
    ) -> Turn {
        let (https, authority) = key(uri);
        let kind = usize::from(background);
        let queued = self.update((https, authority), |o| {
            if o.queue[kind].is_empty() && o.admits(https, background, false) {
                o.take(kind);
                return Err(o.host(https, uri));
            }
            o.tickets += 1;
            let waiting = Arc::new(Ticket::new(o.tickets, Instant::now()));
            o.queue[kind].push_back(waiting.clone());
            let watched = o.watched(runtime(), || next_id(self));
            let relies = !matches!(watched, Watched::No);
            waiting.watched.store(relies, Ordering::Relaxed);
            Ok((waiting, watched))
        });
        let (ticket, watched) = match queued {
            Ok(queued) => queued,
            Err(host) => {
                return Turn {
                    busy: self.busy_guard(https, authority, background),
                    overdue: false,
                    host,
                };
            }
        };
        let mut queued = Queued {
            loads: self,
            origin: (https, authority),
            kind,
            ticket,
            counted: false,
        };
        // One waiter per ticket: an atomic waker is all it needs (a `Notify` keeps a
        // locked list of waiters, about 700 instructions more per wait).
        let ticket = &queued.ticket;
        let notified = std::future::poll_fn(|cx| {
            ticket.woken.register(cx.waker());
            match ticket.given.load(Ordering::Acquire) {
                true => Poll::Ready(()),
                false => Poll::Pending,
            }
        });
        match watched {
            Watched::Yes => notified.await,
            Watched::Start(id) => {
                start(self, https, authority, id);
                notified.await;
            }
            Watched::No => {
                let _ = timer.timeout(CONNECT_WAIT, notified).await;
            }
        }
        let (overdue, host) = self.update((https, authority), |o| {
            let given = queued.ticket.given.load(Ordering::Acquire);
            if !given {
                // Out of time: it goes anyway.
                o.queue[kind].retain(|t| !Arc::ptr_eq(t, &queued.ticket));
                o.take(kind);
            }
            let overdue = !given || queued.ticket.overdue.load(Ordering::Acquire);
            (overdue, o.host(https, uri))
        });
        // Counted now, whichever way: the guard takes the count over.
        queued.counted = true;
        let busy = self.busy_guard(https, authority, background);
        if queued.ticket.freed.load(Ordering::Acquire) {
            tokio::task::yield_now().await;
        }
        Turn {
            busy,
            overdue,
            host,
        }
    }

    /// The guard of a request already counted as holding a connection.
    fn busy_guard(self: &Arc<Self>, https: bool, authority: &str, background: bool) -> Busy {
        Busy {
            loads: self.clone(),
            https,
            authority: authority.into(),
            background,
            headed: false,
        }
    }
}

/// A request waiting for its turn. Dropped while it waits, it leaves the queue, or gives
/// back the turn it was handed.
struct Queued<'a> {
    loads: &'a Loads,
    origin: (bool, &'a str),
    kind: usize,
    ticket: Arc<Ticket>,
    /// Its count belongs to a [`Busy`] guard now.
    counted: bool,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        if self.counted {
            return;
        }
        let (kind, ticket) = (self.kind, &self.ticket);
        self.loads.update(self.origin, |o| {
            if ticket.given.load(Ordering::Acquire) {
                o.give_back(kind, 1);
            } else {
                o.queue[kind].retain(|t| !Arc::ptr_eq(t, ticket));
            }
        });
    }
}

// The watchdog: One deadline per origin for the requests waiting for their turn, instead of one each.
//
// When more requests want an origin than it has connections (16 handshake-era calls in
// flight on 17 connections want about 20, their DELETEs included), a queue stands and
// nearly every request waits in it, if only briefly. A deadline armed per waiting
// request cost about 1k instructions each. Instead, the first request that queues on a
// runtime starts a task there that sleeps until the oldest waiting request is
// [`CONNECT_WAIT`] old, gives every request that old an overdue turn, and sleeps
// again; it ends once no request has waited for a whole [`CONNECT_WAIT`]. Requests
// queued from another runtime arm their own deadline, so a runtime shut down with its
// watchdog never leaves another runtime's requests without one; the watchdog leaves
// them to their deadline. A watchdog that ends any other way (its runtime shut down,
// or built without a timer, where its sleep panics inside its task) gives every
// request it watched its turn.
/// The watchdog of an origin: the runtime it runs on, and its number (a watchdog that
/// finds another number in its origin has been replaced and ends).
#[derive(Clone, Copy, Debug)]
pub(super) struct Watch {
    runtime: Id,
    id: u64,
}

impl Watch {
    /// Its number.
    #[cfg(test)]
    pub(super) fn id(self) -> u64 {
        self.id
    }
}

/// Whether a request that queues now relies on its origin's watchdog.
pub(super) enum Watched {
    /// A watchdog on this runtime watches it.
    Yes,
    /// It starts the origin's watchdog (numbered so) after the origins' lock is released.
    Start(u64),
    /// It arms a deadline of its own: the watchdog runs on another runtime, or this
    /// task runs on none.
    No,
}

impl Origin {
    /// How the request queuing now from `runtime` is watched; numbers a new watchdog
    /// from `next`.
    pub(super) fn watched(&mut self, runtime: Option<Id>, next: impl FnOnce() -> u64) -> Watched {
        match (self.watchdog, runtime) {
            (Some(watch), Some(runtime)) if watch.runtime == runtime => Watched::Yes,
            (None, Some(runtime)) => {
                let id = next();
                self.watchdog = Some(Watch { runtime, id });
                Watched::Start(id)
            }
            _ => Watched::No,
        }
    }

    /// Gives every request it watches that waited [`CONNECT_WAIT`] by `now` an overdue
    /// turn; returns when the oldest one left will have. Requests with a deadline of
    /// their own (queued from another runtime, on that runtime's clock) are left to it.
    fn overdue_by(&mut self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        for kind in 0..2 {
            let mut i = 0;
            while let Some(ticket) = self.queue[kind].get(i) {
                if !ticket.watched.load(Ordering::Relaxed) {
                    i += 1;
                    continue;
                }
                let due = ticket.queued + CONNECT_WAIT;
                if due > now {
                    next = Some(next.map_or(due, |n| n.min(due)));
                    break;
                }
                if let Some(ticket) = self.queue[kind].remove(i) {
                    self.take(kind);
                    ticket.give(true);
                }
            }
        }
        next
    }

    /// Gives every request it watches its turn at once.
    fn release_watched(&mut self) {
        for kind in 0..2 {
            let (watched, own): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.queue[kind])
                .into_iter()
                .partition(|t| t.watched.load(Ordering::Relaxed));
            self.queue[kind] = own;
            for ticket in watched {
                self.take(kind);
                ticket.give(true);
            }
        }
    }
}

/// The current runtime, if this task runs on one.
pub(super) fn runtime() -> Option<Id> {
    Handle::try_current().ok().map(|h| h.id())
}

/// Starts watchdog `id` of the origin (`https`, `authority`) on the current runtime.
pub(super) fn start(loads: &Arc<Loads>, https: bool, authority: &str, id: u64) {
    let mut guard = Guard {
        loads: Arc::downgrade(loads),
        https,
        authority: authority.into(),
        id,
        ended: false,
    };
    tokio::spawn(async move {
        // Set once a round found no request waiting: the next such round ends it.
        let mut idle = false;
        loop {
            let Some(loads) = guard.loads.upgrade() else {
                return guard.end();
            };
            let next = loads.update((guard.https, &guard.authority), |o| {
                if o.watchdog.is_none_or(|w| w.id != guard.id) {
                    return None; // replaced: the origin was forgotten and made again
                }
                let now = Instant::now();
                match o.overdue_by(now) {
                    Some(due) => {
                        idle = false;
                        Some(due)
                    }
                    None if idle => {
                        o.watchdog = None;
                        None
                    }
                    None => {
                        idle = true;
                        Some(now + CONNECT_WAIT)
                    }
                }
            });
            drop(loads);
            let Some(at) = next else {
                return guard.end();
            };
            tokio::time::sleep_until(at).await;
        }
    });
}

/// Clears the origin's watchdog when its task ends any way but its own, and gives
/// every request it watched its turn, since nothing else would end their wait.
struct Guard {
    loads: Weak<Loads>,
    https: bool,
    authority: Box<str>,
    id: u64,
    /// The task ended by itself, its origin's watchdog already cleared or replaced.
    ended: bool,
}

impl Guard {
    /// The task ends by itself: nothing to clear.
    fn end(&mut self) {
        self.ended = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let Some(loads) = self.loads.upgrade() else {
            return;
        };
        loads.update((self.https, &self.authority), |o| {
            if o.watchdog.is_some_and(|w| w.id == self.id) {
                o.watchdog = None;
                o.release_watched();
            }
        });
    }
}

/// Numbers watchdogs, per client.
pub(super) fn next_id(loads: &Loads) -> u64 {
    loads.watchdogs.fetch_add(1, Ordering::Relaxed) + 1
}
