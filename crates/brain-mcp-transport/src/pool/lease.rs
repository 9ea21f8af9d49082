//! What a request holds of the pool: its place in the origin's queue while it waits
//! ([`Waiting`]), then its [`Lease`] on a connection (or the right to open one) until its
//! response and body are dropped.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};

use http::{Request, Response, Uri};
use hyper::body::Incoming;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::conn::{self, Body, Failure, Info, Sender};
use super::{CONNECT_WAIT, Held, Pool, Shared};
use crate::coarse::CoarseTimer;
use crate::observe::{ConnectionUse, EXCHANGE_TARGET};

/// A request waiting in its origin's queue. Dropped while it waits, it leaves the
/// queue, or gives back what it was handed.
pub(super) struct Waiting<'a> {
    pub(super) pool: &'a Pool,
    pub(super) origin: (bool, &'a str),
    pub(super) id: u64,
    pub(super) rx: oneshot::Receiver<Held>,
    pub(super) background: bool,
}

impl Waiting<'_> {
    pub(super) fn done(mut self) {
        self.id = 0;
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.id == 0 {
            return;
        }
        let (id, background) = (self.id, self.background);
        let gone = self.pool.update(self.origin, |o, _| {
            let at = o.queue.iter().position(|w| w.id == id);
            match at.and_then(|at| o.queue.remove(at)) {
                Some(w) => {
                    o.left(&w);
                    true
                }
                None => false,
            }
        });
        if gone {
            return;
        }
        // It was handed something: give it back.
        self.rx.close();
        if let Ok(held) = self.rx.try_recv() {
            let rules = self.pool.rules;
            self.pool.update(self.origin, |o, stale| {
                o.give_back(held, background, Progress::Unwritten, rules, stale);
            });
        }
    }
}

/// A connection's task's end: counts the connection closed (when the pool has not
/// already) and forgets it, also when the task is dropped unpolled to its end.
struct Ended {
    pool: Weak<Pool>,
    origin: (bool, Box<str>),
    id: u64,
    counted: Arc<AtomicBool>,
    h2: bool,
}

impl Drop for Ended {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            let origin = (self.origin.0, &*self.origin.1);
            pool.ended(origin, self.id, &self.counted, self.h2);
        }
    }
}

/// What one request holds of the pool, from its checkout until its response and body
/// are dropped (whoever reads the body keeps it).
#[derive(Debug)]
pub(crate) struct Lease {
    pool: Arc<Pool>,
    https: bool,
    authority: Box<str>,
    background: bool,
    pub(super) held: Held,
    /// How far its exchange went, and whether its request body was small enough to
    /// leave in the write that carried its head.
    progress: Progress,
    small: bool,
}

/// The request bodies, in bytes, taken as written whole once the response ends: they
/// go out with their head in one write, which an idle connection's socket buffer takes
/// at once (Linux starts it at 16 KiB). A larger body may still be being written to a
/// server that answered early and stopped reading; such a connection goes idle only
/// when its task says it is ready.
const SENT_AT_ONCE: u64 = 8 * 1024;

/// How far a lease's exchange went on its connection, which decides whether an
/// HTTP/1.1 connection may serve another request after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Progress {
    /// Nothing was written on it.
    Unwritten,
    /// Its request was handed to the connection; no response head came.
    Written,
    /// The response head came; its body may be unread.
    Headed,
    /// The response body was read to its end after a small request: the connection is
    /// on its way back to waiting for a request, even when its task has not run yet to
    /// say so.
    Read,
}

impl Lease {
    pub(super) fn new(pool: Arc<Pool>, origin: (bool, &str), background: bool, held: Held) -> Self {
        Self {
            pool,
            https: origin.0,
            authority: origin.1.into(),
            background,
            held,
            progress: Progress::Unwritten,
            small: false,
        }
    }

    fn origin(&self) -> (bool, &str) {
        (self.https, &self.authority)
    }

    /// Sends `req` for `uri` on the connection this lease holds, opening it first when
    /// the lease holds the right to. An HTTP/1.1 connection taken from the idle list
    /// that is found closed (or not ready within [`CONNECT_WAIT`]) is replaced once; a
    /// connection this lease opened that is not ready fails the request as unsent
    /// (client.rs's one resend decides what follows), so a server that closes every
    /// connection at once costs one connect per send, not a connect loop.
    pub(crate) async fn send(
        &mut self,
        uri: &Uri,
        req: Request<Body>,
        timer: &CoarseTimer,
    ) -> Result<Response<Incoming>, Failure> {
        // Whether the connection held was opened by this lease (or replaced once).
        let mut fresh = false;
        loop {
            match &mut self.held {
                // Boxed: a connect (connector, TLS, handshake) is a large future that
                // most requests never poll, and unboxed it would be moved with every one.
                Held::Connect => {
                    Box::pin(self.connect(uri)).await?;
                    fresh = true;
                }
                Held::Conn(Sender::H1(sender), _) if fresh => {
                    if let Err(error) = sender.ready().await {
                        // Nothing was written: the request may go again, once.
                        return Err(Failure::Send {
                            error,
                            unsent: true,
                        });
                    }
                    break;
                }
                Held::Conn(Sender::H1(sender), _) => {
                    // Ready at once when its connection task waits for a request;
                    // otherwise (its task yet to see its last reply end) awaited, within
                    // CONNECT_WAIT on the coarse timer, which registers no timer of its own.
                    if sender.is_ready()
                        || matches!(
                            timer.timeout(CONNECT_WAIT, sender.ready()).await,
                            Some(Ok(()))
                        )
                    {
                        break;
                    }
                    // It closed while idle or on its way back, or it does not get ready:
                    // this request opens one in its place (nothing was written), once.
                    let old = std::mem::replace(&mut self.held, Held::Connect);
                    let (background, rules) = (self.background, self.pool.rules);
                    self.pool.update(self.origin(), |o, stale| {
                        o.give_back(old, background, Progress::Written, rules, stale);
                        o.take(background);
                        o.connecting += 1;
                    });
                    fresh = true;
                }
                Held::Conn(Sender::H2(_), _) => break,
                Held::None => return Err(Failure::Connect("no connection was given".into())),
            }
        }
        self.progress = Progress::Written;
        let size = hyper::body::Body::size_hint(req.body()).upper();
        self.small = size.is_some_and(|n| n <= SENT_AT_ONCE);
        match &mut self.held {
            Held::Conn(sender, info) => conn::send(sender, info, req).await,
            _ => Err(Failure::Connect("no connection was given".into())),
        }
    }

    /// Opens the connection this lease may open, and holds it.
    async fn connect(&mut self, uri: &Uri) -> Result<(), Failure> {
        let pool = &self.pool;
        let opened = conn::open(pool.connector.clone(), uri.clone(), pool.connect_limit).await?;
        // Counted before its task runs, so the task's end always finds it counted.
        let id = pool.opened();
        let logged = tracing::enabled!(target: EXCHANGE_TARGET, tracing::Level::DEBUG);
        let info = Info {
            id,
            proxied: opened.proxied,
            used: logged.then(|| ConnectionUse::new(id)),
            host: conn::host_header(uri),
            counted: Arc::new(AtomicBool::new(true)),
        };
        let (background, h2) = (self.background, opened.h2);
        let counted = info.counted.clone();
        let held = pool.update(self.origin(), |o, _| {
            o.connecting = o.connecting.saturating_sub(1);
            match opened.sender {
                Sender::H1(sender) => {
                    o.h1 += 1;
                    Held::Conn(Sender::H1(sender), info)
                }
                Sender::H2(sender) => {
                    // It holds a stream now, not an HTTP/1.1 connection.
                    o.untake(background);
                    o.h2 = Some(Shared {
                        sender: sender.clone(),
                        info: info.clone(),
                        pending: 1,
                        active: 1,
                        idle_since: Instant::now(),
                    });
                    Held::Conn(Sender::H2(sender), info)
                }
            }
        });
        self.held = held;
        let ended = Ended {
            pool: Arc::downgrade(pool),
            origin: (self.https, self.authority.clone()),
            id,
            counted,
            h2,
        };
        let driver = opened.driver;
        tokio::spawn(async move {
            // Dropped when the task ends, whichever way: its connection closed, or its
            // runtime shut down under it.
            let _ended = ended;
            driver.await;
        });
        Ok(())
    }

    /// Notes that the response head came: on h2, the server has taken the stream.
    pub(crate) fn headed(&mut self) {
        if self.progress >= Progress::Headed {
            return;
        }
        self.progress = Progress::Headed;
        if let Held::Conn(Sender::H2(_), info) = &self.held {
            let id = info.id;
            self.pool.update(self.origin(), |o, _| {
                if let Some(h2) = o.h2.as_mut().filter(|h2| h2.info.id == id) {
                    h2.pending = h2.pending.saturating_sub(1);
                }
            });
        }
    }
}

impl Lease {
    /// Notes that the response body was read to its end, so its HTTP/1.1 connection
    /// goes back idle even before its task notices (a request that takes it awaits it
    /// ready), when its request was small ([`SENT_AT_ONCE`]). Call it only when the
    /// body's last frame was seen: [`Reply`](super::Reply) does, for every reader.
    pub(super) fn read(&mut self) {
        if self.small && self.progress == Progress::Headed {
            self.progress = Progress::Read;
        }
    }
}

#[cfg(test)]
impl Lease {
    /// How far its exchange went.
    pub(super) fn progress(&self) -> Progress {
        self.progress
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let held = std::mem::replace(&mut self.held, Held::None);
        if matches!(held, Held::None) {
            return;
        }
        let (background, rules) = (self.background, self.pool.rules);
        let progress = self.progress;
        self.pool.update((self.https, &self.authority), |o, stale| {
            o.give_back(held, background, progress, rules, stale);
        });
    }
}
