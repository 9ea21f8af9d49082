//! The transport's connection pool, on hyper's connection API
//! (`hyper::client::conn::{http1, http2}`).
//!
//! Per origin (scheme and authority) it keeps its HTTP/1.1 connections, idle ones in a
//! list, and at most one shared h2 connection. A request asks for a connection
//! ([`Pool::checkout`]) and gets a [`Lease`]: an idle HTTP/1.1 connection, a stream on
//! the h2 connection, or the right to open a connection itself, in its own task. When
//! none may be had now it waits in the origin's queue, in order of arrival, and whoever
//! frees something (a lease dropped, a connection opened or closed) hands it to the
//! oldest waiting request that may use it. So:
//!
//! - a connect starts only for a request that will use it: connections = calls in
//!   flight, plus at most [`BACKGROUND_SPARE`] for background requests (a session
//!   `DELETE`); a call waits behind background requests for [`CONNECT_WAIT`] at most
//!   (on the client's coarse timer), then opens a connection of its own;
//! - an idle connection is handed out only while its connection task runs, and an
//!   HTTP/1.1 one is awaited ready (`SendRequest::ready`) before its request is written:
//!   a connection that died idle is never used, and one that dies between the check and
//!   the write hands the request back unsent;
//! - to an `https` origin whose protocol is not known, one connect goes first; if ALPN
//!   says h2, every request shares that connection, at most [`H2_STREAMS`] without a
//!   response head at once; later ones wait here, not inside hyper, for
//!   [`CONNECT_WAIT`] at most (then inside hyper);
//! - idle connections close after `pool_idle_timeout` (one reaper task per pool while it
//!   has connections), and an h2 connection is idle only when no stream uses it.
//!
//! Why hyper-util's `client::pool` pieces are not used (read for 0.1.21):
//! - `cache` starts a connect for every request that finds no idle connection, racing
//!   the connections that come back; the loser is either finished in the background and
//!   cached (one connection more per race: the 2-3x C connections hyper-util's legacy
//!   pool opened) or dropped midway (the server has accepted it). It has no order among
//!   waiters beyond its own, no idle timeout, no limit, and does not say which
//!   connections are idle, which the spare rule needs.
//! - `singleton` shares one h2 connection, but cannot bound the streams waiting on it,
//!   and only forgets a dead one when asked (`retain`).
//! - `negotiate` chooses HTTP/1.1 or h2 per connect; the "one connect first to an
//!   origin whose protocol is unknown" rule needs state across requests.
//! - `map` keys services by destination behind `&mut self`; the per-origin map here
//!   also holds the counts the rules read, under one lock.
//!
//! `cache`, `singleton` and `negotiate` also `unwrap` their mutexes (a panic once one is
//! poisoned). The pool here is one map under one lock (poison ignored: every update
//! leaves the counts whole), the queue, and [`conn`] (connect and handshake). The
//! connectors stay hyper-util's and hyper-rustls's (`HttpConnector`, the proxy's, TLS).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use http::Uri;
use hyper::client::conn::{http1, http2};
use hyper_rustls::HttpsConnector;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::coarse::CoarseTimer;
use crate::observe::CONNECTIONS_OPENED;
use crate::proxy::ProxyConnector;

pub(crate) mod conn;
mod lease;
mod reap;
mod reply;
use reap::reap;
#[cfg(test)]
mod tests;

pub(crate) use conn::{Body, Failure};
use conn::{Info, Sender};
pub(crate) use lease::Lease;
use lease::{Progress, Waiting};
pub(crate) use reply::Reply;

/// The connector of pooled connections: TCP (or a proxy), then TLS when `https`.
pub(crate) type Connector = HttpsConnector<ProxyConnector>;

/// Connections that background requests may open beyond what the foreground ones hold.
/// With none, a host calling tools one after another sends each call's `initialize`
/// behind the previous call's `DELETE` on the one connection. Measured
/// (docs/transport.md): a handshake-era call at 1 in flight took 20-50% less client CPU
/// with it, for one connection more.
const BACKGROUND_SPARE: usize = 1;

/// Requests without a response head an h2 connection carries at once; more wait in the
/// origin's queue. RFC 9113 recommends a server allow no fewer than 100 streams; a
/// request beyond its limit would wait inside hyper with its stream already allocated.
pub(crate) const H2_STREAMS: usize = 100;

/// Longest a request waits behind others for an HTTP/1.1 connection before it opens
/// one of its own (a call behind DELETEs a server never answers, say): below the 2 s
/// deadline Brain gives a session DELETE.
pub(crate) const CONNECT_WAIT: Duration = Duration::from_secs(1);

/// Connection counts of one [`HttpClient`](crate::HttpClient)'s pool, every origin together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Connections opened since the client was built (TCP, with TLS when `https`).
    pub connections_opened: u64,
    /// Connections open now, idle or in use.
    pub connections_open: u64,
}

/// Origins by authority, for `http` (index 0) and `https` (index 1). The keys are the
/// configured servers' authorities, so the map hashes with foldhash.
type Origins = [HashMap<Box<str>, Origin, foldhash::fast::RandomState>; 2];

/// The pool of one client; shared by its clones.
pub(crate) struct Pool {
    connector: Connector,
    origins: Mutex<Origins>,
    /// Connections opened since the pool was made.
    opened: AtomicU64,
    /// Connections closed since the pool was made.
    closed: AtomicU64,
    rules: Rules,
    /// Longest a whole connect may take.
    connect_limit: Duration,
    /// A reaper task runs (see [`reap()`]).
    reaping: AtomicBool,
}

/// An idle HTTP/1.1 connection.
struct Idle {
    sender: http1::SendRequest<Body>,
    info: Info,
    since: Instant,
}

/// The shared h2 connection of an origin.
struct Shared {
    sender: http2::SendRequest<Body>,
    info: Info,
    /// Streams without a response head (see [`H2_STREAMS`]).
    pending: usize,
    /// Streams in use, until their lease is dropped.
    active: usize,
    /// When the last stream ended.
    idle_since: Instant,
}

/// A request waiting for a connection.
struct Waiter {
    id: u64,
    background: bool,
    /// It waited [`CONNECT_WAIT`]: it may open a connection whatever the spare rule says.
    overdue: bool,
    tx: oneshot::Sender<Held>,
}

/// What a lease holds.
#[derive(Debug)]
pub(crate) enum Held {
    /// An HTTP/1.1 connection, its own until the lease is dropped, or a stream on the
    /// origin's h2 connection.
    Conn(Sender, Info),
    /// The right to open a connection (counted as connecting).
    Connect,
    /// Nothing (given back).
    None,
}

/// Connections and requests of one origin.
#[derive(Default)]
struct Origin {
    idle: Vec<Idle>,
    /// Open HTTP/1.1 connections, idle or not.
    h1: usize,
    /// Connects under way.
    connecting: usize,
    /// Requests holding an HTTP/1.1 connection or the right to open one.
    busy: usize,
    /// Background requests among them.
    background: usize,
    h2: Option<Shared>,
    /// Requests waiting, oldest first.
    queue: VecDeque<Waiter>,
    /// Foreground requests among them.
    waiting_calls: usize,
    /// Overdue requests among them.
    overdue: usize,
    /// The next waiter's number.
    next: u64,
}

impl Origin {
    /// Whether a request (`background` or not; `queued` when it waits in the queue) may
    /// open a connection now: to an `https` origin whose protocol is not known, only
    /// while no connect is under way; otherwise while the open and opening connections
    /// number fewer than the requests that would hold them, and, but for an `overdue`
    /// request, fewer than the foreground requests (holding one, or waiting: a
    /// background request counts only those holding one) plus [`BACKGROUND_SPARE`].
    fn may_connect(&self, https: bool, background: bool, overdue: bool, queued: bool) -> bool {
        if https && self.h1 == 0 && self.h2.is_none() && self.connecting > 0 {
            return false;
        }
        if overdue {
            return true;
        }
        let supply = self.h1 + self.connecting;
        let holding = self.busy - self.background.min(self.busy);
        let foreground = match background {
            true => holding,
            false => holding + self.waiting_calls + usize::from(!queued),
        };
        supply < (self.busy + 1).min(foreground + BACKGROUND_SPARE)
    }

    /// What a request may have now, counted as held: a stream on the h2 connection
    /// while it has room, an idle HTTP/1.1 connection still open and not idle too long,
    /// or the right to connect ([`Self::may_connect`]). `stale` gets what is dropped.
    fn grant(
        &mut self,
        https: bool,
        (background, overdue, queued): (bool, bool, bool),
        now: Instant,
        rules: Rules,
        stale: &mut Vec<Idle>,
    ) -> Option<Held> {
        if self.h2.as_ref().is_some_and(|h2| h2.sender.is_closed()) {
            self.h2 = None;
        }
        if let Some(h2) = &mut self.h2 {
            // A request overdue by CONNECT_WAIT goes beyond the limit, to wait inside
            // hyper: a server holding every stream without a head blocks no one longer.
            if h2.pending >= H2_STREAMS && !overdue {
                return None;
            }
            h2.pending += 1;
            h2.active += 1;
            return Some(Held::Conn(Sender::H2(h2.sender.clone()), h2.info.clone()));
        }
        while let Some(idle) = self.idle.pop() {
            if idle.sender.is_closed() || now.duration_since(idle.since) >= rules.timeout {
                stale.push(idle);
                continue;
            }
            self.take(background);
            return Some(Held::Conn(Sender::H1(idle.sender), idle.info));
        }
        if self.may_connect(https, background, overdue, queued) {
            self.take(background);
            self.connecting += 1;
            return Some(Held::Connect);
        }
        None
    }

    fn take(&mut self, background: bool) {
        self.busy += 1;
        self.background += usize::from(background);
    }

    fn untake(&mut self, background: bool) {
        self.busy = self.busy.saturating_sub(1);
        if background {
            self.background = self.background.saturating_sub(1);
        }
    }

    /// Hands what is free to the oldest waiting requests that may use it; a request
    /// that may not go yet (a background one's rule is stricter) does not hold up a
    /// younger one that may. Once a kind of request may not go, no later one of that
    /// kind may either (handing something out only makes the rules stricter), so the
    /// queue is read past it only for overdue requests.
    fn dispatch(&mut self, https: bool, now: Instant, rules: Rules, stale: &mut Vec<Idle>) {
        // Foreground, background: a request of the kind found nothing it may have.
        let mut blocked = [false; 2];
        let mut i = 0;
        while let Some(w) = self.queue.get(i) {
            let (background, overdue) = (w.background, w.overdue);
            let kind = usize::from(background);
            if blocked[kind] && !overdue {
                if blocked[0] && blocked[1] && self.overdue == 0 {
                    return;
                }
                i += 1;
                continue;
            }
            let ask = (background, overdue, true);
            let Some(held) = self.grant(https, ask, now, rules, stale) else {
                if overdue {
                    // It waits for the first connect to an origin of unknown protocol,
                    // as every waiting request does.
                    return;
                }
                // Every waiting request needs room on the h2 connection but overdue
                // ones, which go beyond its limit.
                blocked[kind] = true;
                if self.h2.is_some() {
                    blocked = [true; 2];
                }
                i += 1;
                continue;
            };
            let Some(w) = self.queue.remove(i) else {
                return;
            };
            self.left(&w);
            if let Err(held) = w.tx.send(held) {
                self.give_back(held, w.background, Progress::Unwritten, rules, stale);
            }
        }
    }

    /// Counts `w` out of the queue (it was removed).
    fn left(&mut self, w: &Waiter) {
        if !w.background {
            self.waiting_calls = self.waiting_calls.saturating_sub(1);
        }
        if w.overdue {
            self.overdue = self.overdue.saturating_sub(1);
        }
    }

    /// Takes back what a lease held. An HTTP/1.1 connection goes idle when open and never
    /// written on or read to the end, or when ready after its response head (not one still
    /// writing a body a server stopped reading, or with a response unread: it is closed).
    fn give_back(
        &mut self,
        held: Held,
        background: bool,
        progress: Progress,
        rules: Rules,
        stale: &mut Vec<Idle>,
    ) {
        match held {
            Held::Conn(Sender::H1(sender), info) => {
                self.untake(background);
                let idle = Idle {
                    sender,
                    info,
                    since: Instant::now(),
                };
                // Maybe just opened, or its task yet to see the end: its taker awaits it.
                let usable = match progress {
                    Progress::Unwritten | Progress::Read => !idle.sender.is_closed(),
                    Progress::Written => false,
                    Progress::Headed => idle.sender.is_ready(),
                };
                if usable && self.idle.len() < rules.max_idle {
                    self.idle.push(idle);
                } else {
                    stale.push(idle);
                }
            }
            Held::Conn(Sender::H2(_), info) => {
                if let Some(h2) = self.h2.as_mut().filter(|h2| h2.info.id == info.id) {
                    h2.active = h2.active.saturating_sub(1);
                    if progress < Progress::Headed {
                        h2.pending = h2.pending.saturating_sub(1);
                    }
                    if h2.active == 0 {
                        h2.idle_since = Instant::now();
                    }
                }
            }
            Held::Connect => {
                self.untake(background);
                self.connecting = self.connecting.saturating_sub(1);
            }
            Held::None => {}
        }
    }

    fn is_empty(&self) -> bool {
        self.h1 + self.busy + self.connecting + self.queue.len() == 0 && self.h2.is_none()
    }
}

/// How long a connection may stay idle, and how many may per origin.
#[derive(Clone, Copy, Debug)]
struct Rules {
    timeout: Duration,
    max_idle: usize,
}

fn key(uri: &Uri) -> (bool, &str) {
    let https = uri.scheme_str() == Some("https");
    (https, uri.authority().map_or("", |a| a.as_str()))
}

impl Pool {
    pub(crate) fn new(
        connector: Connector,
        idle_timeout: Duration,
        max_idle: usize,
        connect_limit: Duration,
    ) -> Self {
        Self {
            connector,
            origins: Mutex::default(),
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            rules: Rules {
                timeout: idle_timeout,
                max_idle,
            },
            connect_limit,
            reaping: AtomicBool::new(false),
        }
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

    /// Applies `change` to the origin of (`https`, `authority`), hands what is free to
    /// its waiting requests, and forgets it when nothing is left. Connections dropped on
    /// the way are closed after the lock is released.
    fn update<R>(
        &self,
        (https, authority): (bool, &str),
        change: impl FnOnce(&mut Origin, &mut Vec<Idle>) -> R,
    ) -> R {
        let mut stale = Vec::new();
        let changed = {
            let mut origins = self.lock();
            let map = &mut origins[usize::from(https)];
            let origin = match map.get_mut(authority) {
                Some(origin) => origin,
                None => map.entry(authority.into()).or_default(),
            };
            let changed = change(origin, &mut stale);
            for idle in &stale {
                self.uncount(origin, &idle.info.counted, false);
            }
            if !origin.queue.is_empty() {
                let from = stale.len();
                origin.dispatch(https, Instant::now(), self.rules, &mut stale);
                for idle in &stale[from..] {
                    self.uncount(origin, &idle.info.counted, false);
                }
            }
            if origin.is_empty() && origin.idle.is_empty() {
                map.remove(authority);
            }
            changed
        };
        drop(stale);
        changed
    }

    /// A connection for a request to `uri`: at once when one may be had, otherwise
    /// after the requests that came first (see the module docs). A `background` request
    /// opens a connection only within [`BACKGROUND_SPARE`]; any request waiting
    /// [`CONNECT_WAIT`] (on `timer`) then may open an HTTP/1.1 connection, or take a
    /// stream beyond [`H2_STREAMS`] on a full h2 connection.
    pub(crate) async fn checkout(
        self: &Arc<Self>,
        uri: &Uri,
        background: bool,
        timer: &CoarseTimer,
    ) -> Lease {
        let (https, authority) = key(uri);
        let now = Instant::now();
        let rules = self.rules;
        let queued = self.update((https, authority), |o, stale| {
            if o.queue.is_empty()
                && let Some(held) = o.grant(https, (background, false, false), now, rules, stale)
            {
                return Err(held);
            }
            let (tx, rx) = oneshot::channel();
            o.next += 1;
            let id = o.next;
            o.queue.push_back(Waiter {
                id,
                background,
                overdue: false,
                tx,
            });
            o.waiting_calls += usize::from(!background);
            Ok((id, rx))
        });
        let lease = |held| Lease::new(self.clone(), (https, authority), background, held);
        let (id, rx) = match queued {
            Err(held) => return lease(held),
            Ok(queued) => queued,
        };
        let mut waiting = Waiting {
            pool: self,
            origin: (https, authority),
            id,
            rx,
            background,
        };
        let first = timer.timeout(CONNECT_WAIT, &mut waiting.rx).await;
        let held = match first {
            Some(held) => held,
            None => {
                // Overdue: it may open a connection now, whatever the spare rule says.
                self.update((https, authority), |o, _| {
                    if let Some(w) = o.queue.iter_mut().find(|w| w.id == id)
                        && !std::mem::replace(&mut w.overdue, true)
                    {
                        o.overdue += 1;
                    }
                });
                (&mut waiting.rx).await
            }
        };
        let held = held.unwrap_or(Held::None);
        waiting.done();
        lease(held)
    }

    /// A connection opened: counted, and the reaper started if none runs.
    fn opened(self: &Arc<Self>) -> u64 {
        metrics::counter!(CONNECTIONS_OPENED).increment(1);
        if !self.reaping.swap(true, Ordering::AcqRel) {
            reap(Arc::downgrade(self), self.rules.timeout);
        }
        self.opened.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A connection's task ended: it is closed, and no longer counted or idle.
    fn ended(&self, origin: (bool, &str), id: u64, counted: &AtomicBool, h2: bool) {
        self.update(origin, |o, stale| {
            self.uncount(o, counted, h2);
            if h2 {
                if o.h2.as_ref().is_some_and(|s| s.info.id == id) {
                    o.h2 = None;
                }
            } else if let Some(at) = o.idle.iter().position(|i| i.info.id == id) {
                stale.push(o.idle.swap_remove(at));
            }
        });
    }

    /// Counts a connection closed, once: when its task ends, or as soon as the pool
    /// drops its sender (its task may run on a while, or never end: a peer that stops
    /// reading a request body).
    fn uncount(&self, o: &mut Origin, counted: &AtomicBool, h2: bool) {
        if counted.swap(false, Ordering::AcqRel) {
            self.closed.fetch_add(1, Ordering::Relaxed);
            if !h2 {
                o.h1 = o.h1.saturating_sub(1);
            }
        }
    }

    /// Closes connections idle for `idle_timeout`; whether any connection is left.
    fn sweep(&self) -> bool {
        let now = Instant::now();
        let mut stale = Vec::new();
        let mut shared = Vec::new();
        let mut left = false;
        {
            let mut origins = self.lock();
            for map in origins.iter_mut() {
                map.retain(|_, o| {
                    let (kept, old): (Vec<_>, Vec<_>) = std::mem::take(&mut o.idle)
                        .into_iter()
                        .partition(|i| now.duration_since(i.since) < self.rules.timeout);
                    o.idle = kept;
                    for idle in &old {
                        self.uncount(o, &idle.info.counted, false);
                    }
                    stale.extend(old);
                    if o.h2.as_ref().is_some_and(|s| {
                        s.active == 0 && now.duration_since(s.idle_since) >= self.rules.timeout
                    }) && let Some(s) = o.h2.take()
                    {
                        self.uncount(o, &s.info.counted, true);
                        shared.push(s);
                    }
                    left |= o.h1 + o.connecting > 0 || o.h2.is_some();
                    !(o.is_empty() && o.idle.is_empty())
                });
            }
        }
        drop((stale, shared));
        left
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
