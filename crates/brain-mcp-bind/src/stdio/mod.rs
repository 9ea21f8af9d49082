//! The stdio driver: MCP servers that run as child processes the host manages.
//!
//! The client core decides everything here as it does over HTTP (`era`, `handshake`,
//! [`Call`](brain_mcp_proto::client::Call), `listing`, and the few stdio rules in
//! `client::stdio`); this module starts children, moves lines, and keeps the children
//! healthy:
//!
//! - **Handshake era**: a session is a process, so each call gets a fresh child. A
//!   small pool keeps children started and initialized ahead of calls ([`pool`]).
//! - **2026-07-28 era**: one child serves every call at once; lines are routed to calls
//!   by id and progress token ([`link`]).
//! - **Health**: a child that ends on its own is a crash. Starts after crashes wait a
//!   backoff (250 ms doubling to 30 s, reset by the next call that works); the pool and
//!   the shared child are restarted in the background. A call in flight on a child that
//!   dies fails as `connection_lost` with `unknown_outcome: true`.
//! - **Cleanup**: every child is killed when its server is dropped; an abandoned call
//!   gets `notifications/cancelled`, and a per-call child is closed (stdin, a grace, then
//!   kill) off the caller's path.

mod call;
mod exchange;
mod link;
mod pool;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use brain_mcp_proto::client::era::Verdict;
use brain_mcp_proto::client::{Era, Framing, Identity, listing};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::stdio::{StderrTail, StdioConfig};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::client::{McpClient, Target};

pub(crate) use call::execute;
use link::{Link, LinkError};

/// The first wait before starting a child after a crash; it doubles per crash.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between starts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a background start (pool refill, shared child restart) may take.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a child closed on purpose gets to exit after its stdin closes.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// The most `tools/list` pages read.
const MAX_PAGES: usize = 100;
/// The most tools kept from a listing.
const MAX_LISTED: usize = 10_000;

/// A managed stdio server: how to start it, its era, its children.
#[derive(Clone, Debug)]
pub(crate) struct StdioServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    config: StdioConfig,
    pool_size: usize,
    client: McpClient,
    identity: Identity,
    era: Mutex<Option<Era>>,
    pool: Mutex<std::collections::VecDeque<pool::Ready>>,
    starting: AtomicUsize,
    shared: tokio::sync::Mutex<Option<Arc<Link>>>,
    health: Mutex<Health>,
    /// The stderr of the newest child.
    stderr: Mutex<Option<StderrTail>>,
    /// The stderr of the child that ended last (a crash, or one closed after its call).
    ended: Mutex<Option<StderrTail>>,
    stopped: CancellationToken,
    tasks: TaskTracker,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stopped.cancel();
    }
}

/// Crash accounting.
#[derive(Debug, Default)]
struct Health {
    /// Children that ended on their own, or could not be started.
    crashes: u64,
    /// Crashes since the last call that worked.
    streak: u32,
    /// No child starts before this.
    next_start: Option<Instant>,
}

/// What went wrong before the call could be sent.
#[derive(Debug)]
pub(crate) enum StartError {
    /// No child could be started (or the host is shutting down).
    Spawn(String),
    /// A child started but its handshake failed.
    Handshake(String),
}

/// What a host shows about one managed stdio server.
#[derive(Clone, Debug)]
pub(crate) struct Status {
    pub(crate) era: Option<Era>,
    pub(crate) crashes: u64,
    pub(crate) stderr: String,
}

impl StdioServer {
    /// A server started by `config`, calls made as `identity`; `pool_size` children are
    /// kept ready in the handshake era.
    pub(crate) fn new(
        name: String,
        config: StdioConfig,
        pool_size: usize,
        client: McpClient,
        identity: Identity,
        era: Option<Era>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                name,
                config,
                pool_size,
                client,
                identity,
                era: Mutex::new(era),
                pool: Mutex::new(std::collections::VecDeque::new()),
                starting: AtomicUsize::new(0),
                shared: tokio::sync::Mutex::new(None),
                health: Mutex::new(Health::default()),
                stderr: Mutex::new(None),
                ended: Mutex::new(None),
                stopped: CancellationToken::new(),
                tasks: TaskTracker::new(),
            }),
        }
    }

    /// The server's name, for messages.
    pub(crate) fn name(&self) -> &str {
        &self.inner.name
    }

    /// What a failure message may quote about this server: there is no token to remove.
    pub(crate) fn target(&self) -> Target {
        Target {
            url: http::Uri::from_static("http://stdio.invalid/"),
            key: format!("stdio:{}", self.inner.name),
            origin: format!("stdio:{}", self.inner.name),
            bearer: None,
            headers: Vec::new(),
            secrets: brain_mcp_transport::Secrets::none(),
        }
    }

    /// The era, the crash count, and the recent stderr of the child that ended last (or
    /// of the newest, when none has ended).
    pub(crate) fn status(&self) -> Status {
        let crashes = lock(&self.inner.health).crashes;
        let ended = lock(&self.inner.ended).clone();
        let stderr = ended.or_else(|| lock(&self.inner.stderr).clone());
        Status {
            era: *lock(&self.inner.era),
            crashes,
            stderr: stderr.as_ref().map(StderrTail::text).unwrap_or_default(),
        }
    }

    /// Stops starting children at once and drops the ones kept ready (they are killed),
    /// without waiting: for a server whose host is gone, or that was never added.
    pub(crate) fn abandon(&self) {
        self.inner.stopped.cancel();
        lock(&self.inner.pool).clear();
    }

    /// Stops starting children, ends the ones kept ready, and waits (at most until
    /// `deadline`) for background work. Children still serving calls end with them.
    pub(crate) async fn stop(&self, deadline: Instant) -> bool {
        self.inner.stopped.cancel();
        self.inner.tasks.close();
        let ready: Vec<_> = lock(&self.inner.pool).drain(..).collect();
        // A start waiting out its backoff holds the lock; it ends at `stopped`.
        let shared = tokio::time::timeout_at(deadline, self.inner.shared.lock())
            .await
            .ok()
            .and_then(|mut shared| shared.take());
        let grace = deadline
            .saturating_duration_since(Instant::now())
            .min(CLOSE_GRACE);
        // All at once: each child's grace runs together, so `deadline` holds however many
        // children ignore the end of their input.
        let mut closing = tokio::task::JoinSet::new();
        for r in ready {
            closing.spawn(r.link.shutdown(grace));
        }
        if let Some(link) = shared.and_then(|l| Arc::try_unwrap(l).ok()) {
            closing.spawn(link.shutdown(grace));
        }
        while closing.join_next().await.is_some() {}
        tokio::time::timeout_at(deadline, self.inner.tasks.wait())
            .await
            .is_ok()
    }

    /// The era: known, or learned now from a fresh child (which becomes the shared child
    /// of a 2026-era server). The probe waits at most the core's patience.
    pub(crate) async fn era(&self, deadline: Instant) -> Result<Era, StartError> {
        if let Some(era) = *lock(&self.inner.era) {
            return Ok(era);
        }
        let link = self.start(false, deadline).await?;
        // A handshake-era child may quit on the probe: that is an answer, not a crash.
        link.expect_end(true);
        let verdict =
            exchange::probe(&link, self.inner.client.next_id(), &self.inner.identity).await;
        let era = match verdict {
            Verdict::Speaks(era) => era,
            Verdict::Refused(why) | Verdict::Transient { why, .. } => {
                return Err(StartError::Spawn(why));
            }
            _ => return Err(StartError::Spawn("the probe had no verdict".into())),
        };
        *lock(&self.inner.era) = Some(era);
        match era {
            Era::Stateless(v) => {
                link.expect_end(false);
                link.share(Framing::Stateless(v));
                *self.inner.shared.lock().await = Some(Arc::new(link));
            }
            _ => {
                self.background_close(link);
                self.refill();
            }
        }
        Ok(era)
    }

    /// Forgets the era (the server said its framing is stale): the next call probes.
    pub(crate) fn forget_era(&self) {
        *lock(&self.inner.era) = None;
    }

    /// The child that serves every 2026-era call, started if there is none.
    pub(crate) async fn shared(
        &self,
        version: brain_mcp_proto::version::ProtocolVersion,
        deadline: Instant,
    ) -> Result<Arc<Link>, StartError> {
        let mut shared = self.inner.shared.lock().await;
        if let Some(link) = shared.as_ref().filter(|l| !l.is_closed()) {
            return Ok(link.clone());
        }
        let link = self.start(false, deadline).await?;
        link.share(Framing::Stateless(version));
        let link = Arc::new(link);
        *shared = Some(link.clone());
        Ok(link)
    }

    /// Every tool the server lists (at most [`MAX_LISTED`]), and its era, by `deadline`
    /// (the era probe included: its own patience may be longer).
    pub(crate) async fn list(&self, deadline: Instant) -> Result<(Era, Vec<Tool>), String> {
        let era = tokio::time::timeout_at(deadline, self.era(deadline))
            .await
            .map_err(|_| "learning the protocol era took longer than the deadline".to_owned())?
            .map_err(|e| describe(&e))?;
        let (link, framing, own) = match era {
            Era::Stateless(v) => (
                self.shared(v, deadline).await.map_err(|e| describe(&e))?,
                Framing::Stateless(v),
                false,
            ),
            _ => {
                let ready = self.take(deadline, true).await.map_err(|e| describe(&e))?;
                (Arc::new(ready.link), ready.framing, true)
            }
        };
        let pages = tokio::time::timeout_at(deadline, self.pages(&link, &framing)).await;
        if own && let Ok(link) = Arc::try_unwrap(link) {
            self.background_close(link);
        }
        let tools = pages.map_err(|_| "tools/list took longer than the deadline".to_owned())??;
        Ok((era, tools))
    }

    async fn pages(&self, link: &Link, framing: &Framing) -> Result<Vec<Tool>, String> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for page_number in 1..=MAX_PAGES {
            let out = listing::request(
                framing,
                self.inner.client.next_id(),
                cursor.take(),
                &self.inner.identity,
            );
            let raw = exchange::request(link, framing, out)
                .await
                .map_err(|e| format!("tools/list (page {page_number}): {}", exchange_text(&e)))?;
            let page = listing::page(&raw).map_err(|e| format!("tools/list: {e}"))?;
            let room = MAX_LISTED.saturating_sub(tools.len());
            tools.extend(page.tools.into_iter().take(room));
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
        Err(format!(
            "the server kept paginating tools/list past {MAX_PAGES} pages"
        ))
    }

    /// Starts a child, after the crash backoff (failing if that would pass `deadline`).
    async fn start(&self, exclusive: bool, deadline: Instant) -> Result<Link, StartError> {
        if self.inner.stopped.is_cancelled() {
            return Err(StartError::Spawn("the host is shutting down".into()));
        }
        let next = lock(&self.inner.health).next_start;
        if let Some(at) = next.filter(|at| *at > Instant::now()) {
            if at >= deadline {
                let crashes = lock(&self.inner.health).crashes;
                return Err(StartError::Spawn(format!(
                    "the server is restarting after {crashes} crash(es); the next start is after this call's deadline"
                )));
            }
            tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = self.inner.stopped.cancelled() => {
                    return Err(StartError::Spawn("the host is shutting down".into()));
                }
            }
        }
        let weak = Arc::downgrade(&self.inner);
        let on_end = Box::new(move |expected: bool, stderr: StderrTail| {
            if let Some(inner) = weak.upgrade() {
                *lock(&inner.ended) = Some(stderr);
                if !expected {
                    Self { inner }.crashed();
                }
            }
        });
        match Link::spawn(self.inner.config.clone(), exclusive, on_end) {
            Ok(link) => {
                *lock(&self.inner.stderr) = Some(link.stderr());
                Ok(link)
            }
            Err(e) => {
                self.failed();
                Err(StartError::Spawn(format!(
                    "could not start the server: {}",
                    error_chain(&e)
                )))
            }
        }
    }

    /// A child ended on its own: count it, and restart what should be running.
    fn crashed(&self) {
        self.failed();
        if self.inner.stopped.is_cancelled() {
            return;
        }
        match *lock(&self.inner.era) {
            Some(Era::Stateless(v)) => {
                let server = self.clone();
                self.inner.tasks.spawn(async move {
                    let stopped = server.inner.stopped.clone();
                    let restart = async {
                        server.backoff().await;
                        let _ = server.shared(v, Instant::now() + START_TIMEOUT).await;
                    };
                    tokio::select! {
                        () = restart => {}
                        () = stopped.cancelled() => {}
                    }
                });
            }
            Some(Era::Handshake) => self.refill(),
            _ => {}
        }
    }

    /// Waits until a child may start again after crashes.
    async fn backoff(&self) {
        let next = lock(&self.inner.health).next_start;
        if let Some(at) = next {
            tokio::time::sleep_until(at).await;
        }
    }

    fn failed(&self) {
        let mut health = lock(&self.inner.health);
        health.crashes += 1;
        health.streak = health.streak.saturating_add(1);
        let backoff = FIRST_BACKOFF
            .saturating_mul(1 << (health.streak - 1).min(8))
            .min(MAX_BACKOFF);
        health.next_start = Some(Instant::now() + backoff);
    }

    /// A call worked: the next start after a crash waits the shortest backoff again.
    fn worked(&self) {
        let mut health = lock(&self.inner.health);
        health.streak = 0;
        health.next_start = None;
    }

    /// Ends `link` off the caller's path (stdin closed, a grace, then kill).
    fn background_close(&self, link: Link) {
        self.inner
            .client
            .spawn_cleanup(async move { link.shutdown(CLOSE_GRACE).await });
    }

    /// The last line of the newest child's stderr, cut, for a start failure's message.
    fn stderr_hint(&self) -> String {
        let text = lock(&self.inner.stderr)
            .as_ref()
            .map(StderrTail::text)
            .unwrap_or_default();
        match text.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(line) => format!(
                "; its stderr ends with: {}",
                brain_mcp_proto::text::cut(line.trim(), 512)
            ),
            None => String::new(),
        }
    }
}

/// A start failure as one message.
pub(crate) fn describe(e: &StartError) -> String {
    match e {
        StartError::Spawn(m) | StartError::Handshake(m) => m.clone(),
    }
}

fn exchange_text(e: &exchange::ExchangeError) -> String {
    match e {
        exchange::ExchangeError::Link(l) => link_text(l),
        exchange::ExchangeError::Core(c) => c.to_string(),
    }
}

fn link_text(e: &LinkError) -> String {
    match e {
        LinkError::Lost(why) => why.clone(),
        LinkError::TooLong(limit) => {
            format!("the server wrote a line longer than {limit} bytes")
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
