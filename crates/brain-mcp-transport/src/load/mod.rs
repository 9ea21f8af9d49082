//! How busy each origin's pooled connections are, so background requests (the session
//! `DELETE`) can wait for a connection that is already open instead of opening another.
//!
//! hyper's pool does not say how many of its connections are idle, so this counts it
//! from the outside: the connector wraps every connection it opens ([`Counting`]) and
//! counts it per origin until it closes, HTTP/1.1 and h2 apart; every request counts as
//! holding an HTTP/1.1 connection ([`Busy`]) from the moment it is sent until its
//! response and body are dropped. An HTTP/1.1 connection is idle when more are open than
//! held. An open h2 connection takes [`H2_STREAMS`] requests at once that have no
//! response head yet.
//!
//! The same counts decide when a connection is opened. A request waits for its turn
//! before hyper sees it ([`Loads::turn`]): it goes at once when an h2 connection has
//! room for it, when an HTTP/1.1 connection is free (idle, or on its way back to the
//! pool), or when the rules below let it open one; otherwise it queues here (`turn`),
//! in order of arrival, until the counts give it a turn. Queueing here is cheap;
//! queueing in hyper's pool is not, because hyper starts a connect for every request
//! that finds no idle connection. That still happens when a request looks while the
//! connection freed for it is on its way back (hyper returns it from a task of its
//! own), so a connect waits until more requests hold or want a connection than are
//! open or opening, and a connection comes back to the waiting request instead; the
//! oldest waiting connect is the one that goes when one is needed. Background requests count towards that need only up to one spare
//! connection beyond the foreground requests. To an `https` origin whose protocol is not
//! known yet, one connect goes first: if it turns out h2, every request shares it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use http::{HeaderValue, Uri};
use tokio::sync::Notify;

/// Connections and requests of one origin.
#[derive(Debug, Default)]
struct Origin {
    h1: usize,
    h2: usize,
    /// Requests given their turn, until their response and body are dropped.
    busy: usize,
    /// Background requests among them: they use connections, but ask for a new one
    /// only while fewer are open or opening than the foreground requests plus
    /// [`BACKGROUND_SPARE`].
    background: usize,
    /// Connects under way (past waiting).
    connecting: usize,
    /// Connects waiting for a request that needs them.
    waiting: usize,
    /// Wakes the oldest waiting connect.
    demand: Arc<Notify>,
    /// Requests holding a connection whose response head has not come yet: on h2, the
    /// streams a server may still be holding back (see [`H2_STREAMS`]).
    pending: usize,
    /// Requests waiting for their turn (see [`Loads::turn`]), oldest first: foreground,
    /// background.
    queue: [VecDeque<Arc<Ticket>>; 2],
    /// Tickets taken so far: the next one's place.
    tickets: u64,
    /// The `Host` header of its plain-http requests, written once (see [`Origin::host`]).
    host: Option<HeaderValue>,
    /// The task that ends waits of [`CONNECT_WAIT`] (see the watchdog in `turn`), while one runs.
    watchdog: Option<turn::Watch>,
}

impl Origin {
    /// Whether a connect should go now: requests lack a connection, and the open or
    /// opening ones number fewer than the foreground requests (holding a connection or
    /// waiting for their turn) plus [`BACKGROUND_SPARE`]; and, to an `https` origin
    /// before its first connect ended, no connect is under way.
    fn needs_connect(&self, https: bool) -> bool {
        let waiting_calls = self.queue[0].len();
        self.h2 == 0 && self.connect_for(https, self.busy, self.background, waiting_calls)
    }

    /// [`Self::needs_connect`] for `busy` requests holding a connection, of which
    /// `background` are background, and `waiting_calls` calls waiting for their turn.
    fn connect_for(
        &self,
        https: bool,
        busy: usize,
        background: usize,
        waiting_calls: usize,
    ) -> bool {
        let supply = self.h1 + self.connecting;
        let foreground = busy - background + waiting_calls;
        let wanted = supply < busy.min(foreground + BACKGROUND_SPARE);
        let unknown = https && self.h1 == 0;
        wanted && !(unknown && self.connecting > 0)
    }

    /// Whether one more request (`background` or not; `waiting` when it is a ticket of
    /// the queue) may go to hyper now: an h2 connection has room for it (see
    /// [`H2_STREAMS`]), an HTTP/1.1 connection is free (idle, or on its way back to the
    /// pool), or the connect it would make hyper start may go. A call counts the other
    /// waiting calls as demand; a background request does not, so it never takes the
    /// connect a waiting call needs.
    fn admits(&self, https: bool, background: bool, waiting: bool) -> bool {
        if self.h2 > 0 {
            return self.pending < self.h2 * H2_STREAMS;
        }
        if https && self.h1 == 0 {
            // The protocol is not known yet: one request goes and connects, the others
            // wait for its connection (every one of them shares it if it is h2).
            // Requests whose response came on a connection since closed do not count.
            return self.pending == 0;
        }
        let waiting_calls = match background {
            true => 0,
            false => self.queue[0].len() - usize::from(waiting),
        };
        self.h1 + self.connecting > self.busy
            || self.connect_for(
                https,
                self.busy + 1,
                self.background + usize::from(background),
                waiting_calls,
            )
    }

    /// The `Host` header for a request to `uri` at this origin, when it is sure to go over
    /// HTTP/1.1: to `http` only (this client speaks h2 only where TLS negotiates it). To
    /// `https` no count can promise it, since the request may get a new connection that
    /// negotiates h2, where a `Host` beside `:authority` is wrong; hyper-util writes it
    /// there when the connection is HTTP/1.1. hyper-util writes the same value with a
    /// `format!` and a copy per request; here it is written once per origin and shared.
    fn host(&mut self, https: bool, uri: &Uri) -> Option<HeaderValue> {
        if https {
            return None;
        }
        if self.host.is_none() {
            self.host = host_header(uri);
        }
        self.host.clone()
    }

    /// Requests waiting for their turn: foreground, background.
    #[cfg(test)]
    fn queued(&self) -> [usize; 2] {
        [self.queue[0].len(), self.queue[1].len()]
    }

    fn is_empty(&self) -> bool {
        self.h1
            + self.h2
            + self.busy
            + self.connecting
            + self.waiting
            + self.queue[0].len()
            + self.queue[1].len()
            == 0
    }
}

/// Connections that background requests may open beyond what the foreground ones hold.
/// With none, a host calling tools one after another sends each call's `initialize`
/// behind the previous call's `DELETE` on the one connection, and hyper starts (and this
/// module then parks and drops) a connect for almost every request; one spare connection
/// lets the two go side by side. Measured (docs/transport.md): a handshake-era call at
/// 1 in flight took 20-50% less client CPU and 15-40% less time, at 16 and 64 in flight
/// 5-35% less CPU, for one connection more in all.
const BACKGROUND_SPARE: usize = 1;

/// Requests without a response head an h2 connection carries at once; more wait for
/// their turn here. A server may take fewer streams at once (RFC 9113 recommends it
/// allow no fewer than 100), and requests beyond its limit wait inside hyper with their
/// request future, stream and body tasks already allocated; waiting here they hold none
/// of it (at 1000 calls in flight on one connection, 24.5-26.5 KiB per call against
/// 38.1-41.2 without it). hyper-util's pool keeps one h2 connection per origin, so this
/// is also the most an origin carries at once, but for requests past [`CONNECT_WAIT`].
const H2_STREAMS: usize = 100;

/// Longest a request waits for its turn, and longest a connect waits for a request that
/// needs it while the request that started it has no answer. Then the request goes, and
/// the connect goes if any request still lacks a connection (a call behind DELETEs a
/// server never answers, say), so that none waits for ever; below the 2 s deadline Brain
/// gives a session DELETE.
const CONNECT_WAIT: Duration = Duration::from_secs(1);

tokio::task_local! {
    /// The request being sent from this task: hyper starts its connect from the
    /// request's own task, so the connector learns which request it connects for.
    static REQUEST: Arc<Served>;
}

/// Whether a request has its answer (or gave up): a connect started for it that is
/// still waiting then ends unused.
#[derive(Debug, Default)]
pub(crate) struct Served {
    done: AtomicBool,
    notify: Notify,
    /// The request waited [`CONNECT_WAIT`] for its turn: a connect hyper starts for it
    /// goes at once while a request still lacks a connection.
    overdue: bool,
}

impl Served {
    /// Marks the request answered and wakes its waiting connect.
    fn finish(&self) {
        self.done.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.done.load(Ordering::Acquire) {
                return;
            }
            notified.await;
        }
    }
}

/// Runs `request` (hyper's future for one request) so that a connect it starts knows
/// when the request no longer needs it, and whether it is
/// [`Turn::overdue`](turn::Turn::overdue).
pub(crate) async fn tracked<F: Future>(request: F, overdue: bool) -> F::Output {
    /// Marks the request answered however its future ends, dropped included.
    struct Finish(Arc<Served>);
    impl Drop for Finish {
        fn drop(&mut self) {
            self.0.finish();
        }
    }
    let served = Finish(Arc::new(Served {
        overdue,
        ..Served::default()
    }));
    REQUEST.scope(served.0.clone(), request).await
}

/// Origins by authority, for `http` (index 0) and `https` (index 1), as hyper's pool
/// keys its connections. Every request updates its origin two or more times (sent,
/// answered, each connect hyper starts), so the map hashes with foldhash: the keys are
/// the configured servers' authorities, not a peer's choice.
type Origins = [HashMap<Box<str>, Origin, foldhash::fast::RandomState>; 2];

/// The counts of every origin of one client; cheap to share.
#[derive(Debug, Default)]
pub(crate) struct Loads {
    origins: Mutex<Origins>,
    /// Connections opened since the client was built.
    opened: AtomicU64,
    /// Connections closed since the client was built.
    closed: AtomicU64,
    /// Watchdogs started since the client was built (see the watchdog in `turn`).
    watchdogs: AtomicU64,
}

/// Connection counts of one [`HttpClient`](crate::HttpClient)'s pool, every origin together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Connections opened since the client was built (TCP, with TLS when `https`).
    pub connections_opened: u64,
    /// Connections open now, idle or in use.
    pub connections_open: u64,
}

/// `host[:port]` of `uri`, the port left out when it is the scheme's default: what
/// hyper-util writes into a request that has no `Host`.
fn host_header(uri: &Uri) -> Option<HeaderValue> {
    let host = uri.host()?;
    let default = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let value = match uri.port() {
        Some(port) if port.as_u16() != default => HeaderValue::try_from(format!("{host}:{port}")),
        _ => HeaderValue::from_str(host),
    };
    value.ok()
}

fn key(uri: &Uri) -> (bool, &str) {
    let https = uri.scheme_str() == Some("https");
    (https, uri.authority().map_or("", |a| a.as_str()))
}

impl Loads {
    /// Watchdogs started so far.
    #[cfg(test)]
    fn watches(&self) -> u64 {
        self.watchdogs.load(Ordering::Relaxed)
    }

    /// The pool's connection counts now.
    pub(crate) fn stats(&self) -> PoolStats {
        let opened = self.opened.load(Ordering::Relaxed);
        let closed = self.closed.load(Ordering::Relaxed);
        PoolStats {
            connections_opened: opened,
            connections_open: opened.saturating_sub(closed),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Origins> {
        self.origins.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `change` to the origin's counts, then hands out turns, wakes a connect
    /// that became needed, and forgets an origin with nothing left; returns what
    /// `change` returned.
    fn update<R>(
        &self,
        (https, authority): (bool, &str),
        change: impl FnOnce(&mut Origin) -> R,
    ) -> R {
        let mut origins = self.lock();
        let map = &mut origins[usize::from(https)];
        let origin = match map.get_mut(authority) {
            Some(origin) => origin,
            None => map.entry(authority.into()).or_default(),
        };
        let changed = change(origin);
        // Turns first: a call given its turn may be what makes a waiting connect needed.
        origin.hand_off(https);
        if origin.needs_connect(https) {
            origin.demand.notify_one();
        }
        if origin.is_empty() {
            map.remove(authority);
        }
        changed
    }

    /// Waits until a connect to the origin is needed (see the module docs); `false` when
    /// the request that started it got its answer first (`served`), or none was needed
    /// within [`CONNECT_WAIT`].
    async fn connect_needed(
        &self,
        (https, authority): (bool, &str),
        served: Option<Arc<Served>>,
    ) -> bool {
        if served.as_ref().is_some_and(|s| s.overdue) {
            // As after a connect's own wait: only while a request still lacks one, and
            // to an origin whose protocol is not known, not beside a connect under way.
            let go = self.update((https, authority), |o| {
                let unknown = https && o.h1 == 0 && o.connecting > 0;
                let go = o.h2 == 0 && o.busy > o.h1 + o.connecting && !unknown;
                o.connecting += usize::from(go);
                go
            });
            if go {
                return true;
            }
        }
        let demand = self.update((https, authority), |o| {
            o.waiting += 1;
            o.demand.clone()
        });
        // Dropped while it waits (its request gave up), the connect stops counting.
        let mut parked = Parked {
            loads: self,
            origin: (https, authority),
            waiting: true,
        };
        let mut deadline = tokio::time::Instant::now() + CONNECT_WAIT;
        loop {
            let notified = demand.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let go = self.update((https, authority), |o| {
                let go = o.needs_connect(https);
                if go {
                    o.waiting -= 1;
                    o.connecting += 1;
                }
                go
            });
            if go {
                parked.waiting = false;
                return true;
            }
            let answered = async {
                match &served {
                    Some(served) => served.wait().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = answered => {
                    self.update((https, authority), |o| o.waiting -= 1);
                    parked.waiting = false;
                    return false;
                }
                () = &mut notified => continue,
                () = tokio::time::sleep_until(deadline) => {}
            }
            match self.out_of_time((https, authority)) {
                Some(go) => {
                    parked.waiting = false;
                    return go;
                }
                None => deadline = tokio::time::Instant::now() + CONNECT_WAIT,
            }
        }
    }

    /// A waiting connect's [`CONNECT_WAIT`] is over: whether it goes now (`Some`), or
    /// waits once more (`None`).
    ///
    /// While any request still lacks an HTTP/1.1 connection (a background one waiting
    /// behind long calls, say), it goes after all; otherwise every request has a
    /// connection, and this connect was started for one that got a pooled connection
    /// meanwhile. To an h2 origin hyper connects when its pool has let the connection
    /// go (it drops it `pool_idle_timeout` after its last checkout, streams still
    /// open): the connect goes while its request, still in the task that started it,
    /// waits for it, one at a time. One that hyper moved to a task of its own was
    /// started for a request that got the shared connection, and ends unused.
    fn out_of_time(&self, (https, authority): (bool, &str)) -> Option<bool> {
        let for_request = REQUEST.try_with(|_| ()).is_ok();
        self.update((https, authority), |o| {
            let go = if o.h2 > 0 {
                if for_request && o.connecting > 0 {
                    return None;
                }
                for_request
            } else {
                o.busy > o.h1 + o.connecting
            };
            o.waiting -= 1;
            o.connecting += usize::from(go);
            Some(go)
        })
    }
}

/// A connect waiting until it is needed ([`Loads::connect_needed`]); counted in its
/// origin's `waiting` until it goes, ends, or is dropped.
struct Parked<'a> {
    loads: &'a Loads,
    origin: (bool, &'a str),
    waiting: bool,
}

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        if self.waiting {
            self.loads
                .update(self.origin, |o| o.waiting = o.waiting.saturating_sub(1));
        }
    }
}

/// A request holding a connection, from its turn until its response and body are
/// dropped (whoever reads the body keeps it).
#[derive(Debug)]
pub(crate) struct Busy {
    loads: Arc<Loads>,
    https: bool,
    authority: Box<str>,
    background: bool,
    /// Its response head came (see [`Origin::pending`]).
    headed: bool,
}

impl Busy {
    /// Notes that the response head came: on h2, the server has taken the stream.
    pub(crate) fn headed(&mut self) {
        if !std::mem::replace(&mut self.headed, true) {
            self.loads.update((self.https, &self.authority), |o| {
                o.pending = o.pending.saturating_sub(1);
            });
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let (kind, pending) = (usize::from(self.background), usize::from(!self.headed));
        self.loads.update((self.https, &self.authority), |o| {
            o.give_back(kind, pending)
        });
    }
}

mod connect;
#[cfg(test)]
mod tests;
mod turn;

pub(crate) use connect::Counting;
use turn::Ticket;
