//! One deadline per origin for the requests waiting for their turn, instead of one each.
//!
//! When more requests want an origin than it has connections (16 handshake-era calls in
//! flight on 17 connections want about 20, their DELETEs included), a queue stands and
//! nearly every request waits in it, if only briefly. A deadline armed per waiting
//! request cost about 1k instructions each. Instead, the first request that queues on a
//! runtime starts a task there that sleeps until the oldest waiting request is
//! [`CONNECT_WAIT`] old, gives every request that old an overdue turn, and sleeps
//! again; it ends once no request has waited for a whole [`CONNECT_WAIT`]. Requests
//! queued from another runtime arm their own deadline, so a runtime shut down with its
//! watchdog never leaves another runtime's requests without one; the watchdog leaves
//! them to their deadline. A watchdog that ends any other way (its runtime shut down,
//! or built without a timer, where its sleep panics inside its task) gives every
//! request it watched its turn.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use tokio::runtime::{Handle, Id};
use tokio::time::Instant;

use super::{CONNECT_WAIT, Loads, Origin};

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
