//! Managed stdio servers: MCP servers that run as child processes the host keeps. The
//! protocol runs through the same driver as over HTTP (`crate::driver`, over a child
//! [`Link`]); this module starts children and keeps them healthy:
//!
//! - **Handshake era**: a session is a process, so each call gets a fresh child. A
//!   small pool keeps children started and initialized ahead of calls ([`pool`]).
//! - **2026-07-28 era**: one child serves every call at once; its messages are routed to
//!   calls by id and progress token (the child link).
//! - **Health**: a child that ends on its own is a crash. Starts after crashes wait a
//!   backoff (the core's [`Health`] under [`Policy::RESTART`]: 250 ms, doubling with each
//!   crash of a child started after it, to 30 s; reset by the next call that works); the pool and
//!   the shared child are restarted in the background. A call in flight on a child that
//!   dies fails as `connection_lost` with `unknown_outcome: true`.
//! - **Cleanup**: every child is killed when its server is dropped; an abandoned call
//!   gets `notifications/cancelled`, and a per-call child is closed (stdin, a grace, then
//!   kill) off the caller's path.

mod pool;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use brain_mcp_proto::client::era::{PROBE_PATIENCE, Verdict};
use brain_mcp_proto::client::{Effect, Era, Framing, Identity, Outcome, ServerKind, Sessions};
use brain_mcp_transport::stdio::{StderrTail, StdioConfig};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::client::McpClient;
use crate::driver::{self, Cause, Channel, DriverError, Probed, StartError, StartFailure, Step};
use crate::link::Link;
use brain_mcp_transport::stdio::{CLOSE_GRACE, ChildLink};

/// How long a background start (pool refill, shared child restart) may take.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Numbers the servers of this process, so each has an era cache key of its own.
static SERVERS: AtomicU64 = AtomicU64::new(1);

/// A managed stdio server: how to start it, its children.
#[derive(Clone, Debug)]
pub(crate) struct StdioServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    /// The era cache key (`stdio:NAME#N`) and what logs call it (`stdio:NAME`).
    key: String,
    origin: String,
    config: StdioConfig,
    pool_size: usize,
    client: McpClient,
    identity: Identity,
    pool: Mutex<VecDeque<pool::Ready>>,
    starting: AtomicUsize,
    shared: tokio::sync::Mutex<Option<Arc<ChildLink>>>,
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
        self.client.servers().forget(&self.key);
    }
}

/// What a host shows about one managed stdio server.
#[derive(Clone, Debug)]
pub(crate) struct Status {
    pub(crate) era: Option<Era>,
    pub(crate) crashes: u64,
    pub(crate) stderr: String,
}

impl StdioServer {
    /// A server started by `config`, its sessions opened as `identity`; `pool_size`
    /// children are kept ready in the handshake era. A known `era` skips the probe.
    pub(crate) fn new(
        name: String,
        config: StdioConfig,
        pool_size: usize,
        client: McpClient,
        identity: Identity,
        era: Option<Era>,
    ) -> Self {
        let key = format!("stdio:{name}#{}", SERVERS.fetch_add(1, Ordering::Relaxed));
        if let Some(era) = era {
            client.servers().learned(&key, ServerKind::Process, era);
        }
        Self {
            inner: Arc::new(Inner {
                origin: format!("stdio:{name}"),
                key,
                name,
                config,
                pool_size,
                client,
                identity,
                pool: Mutex::new(VecDeque::new()),
                starting: AtomicUsize::new(0),
                shared: tokio::sync::Mutex::new(None),
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

    /// The era cache key.
    pub(crate) fn key(&self) -> &str {
        &self.inner.key
    }

    /// What logs and messages call the server.
    pub(crate) fn origin(&self) -> &str {
        &self.inner.origin
    }

    /// The era, the crash count, and the recent stderr of the child that ended last (or
    /// of the newest, when none has ended).
    pub(crate) fn status(&self) -> Status {
        let (_, crashes) = self.inner.client.servers().start_after(&self.inner.key);
        let ended = lock(&self.inner.ended).clone();
        let stderr = ended.or_else(|| lock(&self.inner.stderr).clone());
        Status {
            era: self.inner.client.era(&self.inner.key),
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
        for child in ready.into_iter().map(|r| r.child.clone()).chain(shared) {
            closing.spawn(async move { child.close_within(grace).await });
        }
        while closing.join_next().await.is_some() {}
        tokio::time::timeout_at(deadline, self.inner.tasks.wait())
            .await
            .is_ok()
    }

    /// One probe on a fresh child (which becomes the shared child of a 2026-era server).
    /// A child that quits on it, or stays silent for the core's patience, speaks the
    /// handshake.
    pub(crate) async fn probe_once(&self, deadline: Instant) -> Result<Probed, DriverError> {
        let child = self.start(false, deadline).await.map_err(|why| {
            DriverError::new(Step::Probe, Cause::Start(StartFailure::NotStarted(why)))
        })?;
        // A handshake-era child may quit on the probe: that is an answer, not a crash.
        child.expect_end(true);
        let link = Link::Child(child.clone());
        let inner = &self.inner;
        let probed =
            driver::probe(&inner.client, &link, &inner.identity, Some(PROBE_PATIENCE)).await?;
        if let Verdict::Speaks(era) = &probed.verdict {
            let framing = Framing::for_era(*era);
            if Self::pooled(&framing) {
                self.background_close(child);
                self.refill();
            } else {
                child.expect_end(false);
                child.share(framing);
                *inner.shared.lock().await = Some(child);
            }
        }
        Ok(probed)
    }

    /// Whether `framing`'s era runs each exchange on a child of its own from the pool (the
    /// core's word), rather than on the one shared child.
    fn pooled(framing: &Framing) -> bool {
        framing.sessions(ServerKind::Process) == Sessions::PooledChild
    }

    /// Where a call or a listing runs in `framing`'s era: a fresh child whose session is
    /// open (from the pool; with `bounded`, started within `deadline` when the pool is
    /// empty), or the child every 2026-era call shares.
    pub(crate) async fn channel(
        &self,
        framing: Framing,
        deadline: Instant,
        bounded: bool,
    ) -> Result<Channel, DriverError> {
        let client = &self.inner.client;
        if Self::pooled(&framing) {
            let ready = self.take(deadline, bounded).await?;
            return Ok(ready.into_channel(client));
        }
        let child = self.shared(framing.clone(), deadline).await?;
        Ok(Channel::sessionless(client, Link::Child(child), framing))
    }

    /// The child that serves every 2026-era call, started if there is none.
    async fn shared(
        &self,
        framing: Framing,
        deadline: Instant,
    ) -> Result<Arc<ChildLink>, DriverError> {
        let mut shared = self.inner.shared.lock().await;
        if let Some(child) = shared.as_ref().filter(|c| !c.is_closed()) {
            return Ok(child.clone());
        }
        let child = self.start(false, deadline).await.map_err(|why| {
            DriverError::new(Step::Handshake, Cause::Start(StartFailure::NotStarted(why)))
        })?;
        child.share(framing);
        *shared = Some(child.clone());
        Ok(child)
    }

    /// Starts a child, after the crash backoff (failing if that would pass `deadline`).
    async fn start(
        &self,
        exclusive: bool,
        deadline: Instant,
    ) -> Result<Arc<ChildLink>, StartError> {
        if self.inner.stopped.is_cancelled() {
            return Err(StartError::ShuttingDown);
        }
        let (next, crashes) = self.inner.client.servers().start_after(&self.inner.key);
        if let Some(at) = next
            .map(Instant::from_std)
            .filter(|at| *at > Instant::now())
        {
            if at >= deadline {
                return Err(StartError::Restarting { crashes });
            }
            tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = self.inner.stopped.cancelled() => {
                    return Err(StartError::ShuttingDown);
                }
            }
        }
        let weak = Arc::downgrade(&self.inner);
        let started = Instant::now();
        let on_end = Box::new(move |expected: bool, stderr: StderrTail| {
            if let Some(inner) = weak.upgrade() {
                *lock(&inner.ended) = Some(stderr);
                if !expected {
                    Self { inner }.crashed(started);
                }
            }
        });
        let limit = self.inner.client.http().config().message_limit;
        match ChildLink::spawn(self.inner.config.clone(), exclusive, limit, on_end) {
            Ok(child) => {
                *lock(&self.inner.stderr) = Some(child.stderr());
                Ok(child)
            }
            Err(e) => {
                self.failed(started);
                Err(StartError::Spawn(error_chain(&e)))
            }
        }
    }

    /// A child started at `started` ended on its own: the core counts it and says what
    /// to restart.
    fn crashed(&self, started: Instant) {
        let effect = self.record(Outcome::Ended, started);
        if self.inner.stopped.is_cancelled() {
            return;
        }
        let Effect::Restart { sessions, .. } = effect else {
            return;
        };
        if sessions == Sessions::PooledChild {
            return self.refill();
        }
        let Some(framing) = self.inner.client.era(&self.inner.key).map(Framing::for_era) else {
            return;
        };
        let server = self.clone();
        self.inner.tasks.spawn(async move {
            let stopped = server.inner.stopped.clone();
            let restart = async {
                server.backoff().await;
                let _ = server.shared(framing, Instant::now() + START_TIMEOUT).await;
            };
            tokio::select! {
                () = restart => {}
                () = stopped.cancelled() => {}
            }
        });
    }

    /// Waits until a child may start again after crashes.
    async fn backoff(&self) {
        let (next, _) = self.inner.client.servers().start_after(&self.inner.key);
        if let Some(at) = next.map(Instant::from_std) {
            tokio::time::sleep_until(at).await;
        }
    }

    /// A child started at `started` could not start or open its session: counted (a child
    /// started after the backoff lengthens it); whoever started it tries again.
    fn failed(&self, started: Instant) {
        self.record(Outcome::Ended, started);
    }

    /// Records `outcome` of a child started at `started` in the server's state.
    fn record(&self, outcome: Outcome, started: Instant) -> Effect {
        let inner = &self.inner;
        let servers = inner.client.servers();
        let kind = ServerKind::Process;
        servers.record(&inner.key, kind, &inner.origin, outcome, started.into_std())
    }

    /// Ends `child` off the caller's path (stdin closed, a grace, then kill).
    fn background_close(&self, child: Arc<ChildLink>) {
        self.inner
            .client
            .spawn_cleanup(async move { child.close().await });
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
