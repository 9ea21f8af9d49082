//! How busy each origin's pooled connections are, so background requests (the session
//! `DELETE`) can wait for a connection that is already open instead of opening another.
//!
//! hyper's pool does not say how many of its connections are idle, so this counts it
//! from the outside: the connector wraps every connection it opens ([`Counting`]) and
//! counts it per origin until it closes, HTTP/1.1 and h2 apart; every request counts as
//! holding an HTTP/1.1 connection ([`Busy`]) from the moment it is sent until its
//! response and body are dropped. An HTTP/1.1 connection is idle when more are open than
//! held. An open h2 connection takes any number of requests.
//!
//! The same counts decide when the connector really connects. hyper starts a connect
//! whenever a request finds no idle connection, even when one is about to come back to
//! the pool (hyper returns it from a task of its own, after the body ended); under load
//! that opens a new connection for a good part of all requests. Here a connect waits
//! until more requests hold or want a connection than are open or opening, so a
//! connection comes back to the waiting request instead; the oldest waiting connect is
//! the one that goes when one is needed. Background requests count towards that need
//! only up to one spare connection beyond the foreground requests. To an `https` origin
//! whose protocol is not known yet, one connect goes first: if it turns out h2, every
//! request shares it.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};
use tokio::sync::Notify;

use crate::observe::{CONNECTIONS_OPENED, ConnectionUse};

/// Connections and requests of one origin.
#[derive(Debug, Default)]
struct Origin {
    h1: usize,
    h2: usize,
    /// Requests holding (or waiting for) a connection.
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
}

impl Origin {
    /// Whether a connect should go now: requests lack a connection, and the open or
    /// opening ones number fewer than the foreground requests plus [`BACKGROUND_SPARE`];
    /// and, to an `https` origin before its first connect ended, no connect is under way.
    fn needs_connect(&self, https: bool) -> bool {
        if self.h2 > 0 {
            return false;
        }
        let supply = self.h1 + self.connecting;
        let foreground = self.busy - self.background;
        let wanted = supply < self.busy.min(foreground + BACKGROUND_SPARE);
        let unknown = https && self.h1 == 0;
        wanted && !(unknown && self.connecting > 0)
    }

    fn is_empty(&self) -> bool {
        self.h1 + self.h2 + self.busy + self.connecting + self.waiting == 0
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

/// Longest a connect waits for a request that needs it, while the request that started it
/// has no answer. Then it goes if any request still lacks a connection (a background one
/// waiting behind long calls, say), so that none waits for ever; below the 2 s deadline
/// Brain gives a session DELETE.
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
/// when the request no longer needs it.
pub(crate) async fn tracked<F: std::future::Future>(request: F) -> F::Output {
    /// Marks the request answered however its future ends, dropped included.
    struct Finish(Arc<Served>);
    impl Drop for Finish {
        fn drop(&mut self) {
            self.0.finish();
        }
    }
    let served = Finish(Arc::new(Served::default()));
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

fn key(uri: &Uri) -> (bool, &str) {
    let https = uri.scheme_str() == Some("https");
    (https, uri.authority().map_or("", |a| a.as_str()))
}

impl Loads {
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

    fn update(&self, (https, authority): (bool, &str), change: impl FnOnce(&mut Origin)) {
        let mut origins = self.lock();
        let map = &mut origins[usize::from(https)];
        let origin = match map.get_mut(authority) {
            Some(origin) => origin,
            None => map.entry(authority.into()).or_default(),
        };
        change(origin);
        if origin.needs_connect(https) {
            origin.demand.notify_one();
        }
        if origin.is_empty() {
            map.remove(authority);
        }
    }

    /// Waits until a connect to the origin is needed (see the module docs); `false` when
    /// the request that started it got its answer first (`served`), or none was needed
    /// within [`CONNECT_WAIT`].
    async fn connect_needed(
        &self,
        (https, authority): (bool, &str),
        served: Option<Arc<Served>>,
    ) -> bool {
        let mut demand = None;
        self.update((https, authority), |o| {
            o.waiting += 1;
            demand = Some(o.demand.clone());
        });
        let Some(demand) = demand else {
            return true;
        };
        let deadline = tokio::time::Instant::now() + CONNECT_WAIT;
        let needed = loop {
            let notified = demand.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let mut go = false;
            self.update((https, authority), |o| {
                go = o.needs_connect(https);
                if go {
                    o.waiting -= 1;
                    o.connecting += 1;
                }
            });
            if go {
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
                    return false;
                }
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => break false,
            }
        };
        // Out of time. While any request still lacks a connection (a background one
        // waiting behind long calls, say), connect for it after all; otherwise every
        // request has a connection and this connect was started for one that got a
        // pooled connection meanwhile.
        let mut go = needed;
        self.update((https, authority), |o| {
            o.waiting -= 1;
            go = o.h2 == 0 && o.busy > o.h1 + o.connecting;
            if go {
                o.connecting += 1;
            }
        });
        go
    }

    /// Counts a request to `uri` as holding (or waiting for) a connection until the guard
    /// is dropped. A `background` request uses the open connections in turn with the
    /// others and makes one open only within [`BACKGROUND_SPARE`].
    pub(crate) fn busy(self: &Arc<Self>, uri: &Uri, background: bool) -> Busy {
        let (https, authority) = key(uri);
        self.update((https, authority), |o| {
            o.busy += 1;
            o.background += usize::from(background);
        });
        Busy {
            _guard: Arc::new(BusyGuard {
                loads: self.clone(),
                https,
                authority: authority.into(),
                background,
            }),
        }
    }
}

/// A request holding a connection; cloned into the response so whoever keeps the body
/// keeps the count. The count drops with the last clone.
#[derive(Clone, Debug)]
pub(crate) struct Busy {
    _guard: Arc<BusyGuard>,
}

#[derive(Debug)]
pub(crate) struct BusyGuard {
    loads: Arc<Loads>,
    https: bool,
    authority: Box<str>,
    background: bool,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let background = usize::from(self.background);
        self.loads.update((self.https, &self.authority), |o| {
            o.busy = o.busy.saturating_sub(1);
            o.background = o.background.saturating_sub(background);
        });
    }
}

/// A connector that counts the connections `C` opens, per origin, until they close.
#[derive(Clone, Debug)]
pub(crate) struct Counting<C> {
    inner: C,
    loads: Arc<Loads>,
}

impl<C> Counting<C> {
    pub(crate) fn new(inner: C, loads: Arc<Loads>) -> Self {
        Self { inner, loads }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower_service::Service<Uri> for Counting<C>
where
    C: tower_service::Service<Uri> + Clone + Send + 'static,
    C::Response: Connection + Send + 'static,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
{
    type Response = Counted<C::Response>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let loads = self.loads.clone();
        let (https, authority) = key(&uri);
        let authority: Box<str> = authority.into();
        let mut inner = self.inner.clone();
        let served = REQUEST.try_with(Arc::clone).ok();
        Box::pin(async move {
            if !loads.connect_needed((https, &authority), served).await {
                return Err("no request needed this connection".into());
            }
            let connecting = inner.call(uri);
            // Counted as connecting until this ends, whichever way.
            let started = Connecting {
                loads: &loads,
                https,
                authority: &authority,
                done: false,
            };
            let io = connecting.await.map_err(Into::into)?;
            let h2 = io.connected().is_negotiated_h2();
            let id = started.opened(h2);
            Ok(Counted {
                io,
                used: ConnectionUse::new(id),
                _open: OpenGuard {
                    loads,
                    https,
                    authority,
                    h2,
                },
            })
        })
    }
}

/// A connect under way, counted until dropped.
struct Connecting<'a> {
    loads: &'a Loads,
    https: bool,
    authority: &'a str,
    done: bool,
}

impl Connecting<'_> {
    /// The connect succeeded: it now counts as an open connection, in one step so that
    /// no other connect sees a moment with one connection too few. Returns its number.
    fn opened(mut self, h2: bool) -> u64 {
        self.done = true;
        let id = self.loads.opened.fetch_add(1, Ordering::Relaxed) + 1;
        metrics::counter!(CONNECTIONS_OPENED).increment(1);
        self.loads.update((self.https, self.authority), |o| {
            o.connecting = o.connecting.saturating_sub(1);
            if h2 {
                o.h2 += 1;
            } else {
                o.h1 += 1;
            }
        });
        id
    }
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.loads.update((self.https, self.authority), |o| {
                o.connecting = o.connecting.saturating_sub(1);
            });
        }
    }
}

/// A connection counted as open until dropped.
#[derive(Debug)]
pub(crate) struct Counted<T> {
    io: T,
    /// Handed to every response on this connection (new or reused).
    used: ConnectionUse,
    _open: OpenGuard,
}

#[derive(Debug)]
struct OpenGuard {
    loads: Arc<Loads>,
    https: bool,
    authority: Box<str>,
    h2: bool,
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.loads.closed.fetch_add(1, Ordering::Relaxed);
        let h2 = self.h2;
        self.loads.update((self.https, &self.authority), |o| {
            if h2 {
                o.h2 = o.h2.saturating_sub(1);
            } else {
                o.h1 = o.h1.saturating_sub(1);
            }
        });
    }
}

impl<T: Connection> Connection for Counted<T> {
    fn connected(&self) -> Connected {
        self.io.connected().extra(self.used.clone())
    }
}

impl<T: Read + Unpin> Read for Counted<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Counted<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::Origin;

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
}
