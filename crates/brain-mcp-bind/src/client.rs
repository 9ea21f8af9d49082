//! The shared client state: one HTTP pool, the era cache, request ids and background cleanup.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use brain_mcp_proto::auth::AddrClass;
use brain_mcp_proto::client::Identity;
use brain_mcp_proto::client::{Era, ServerKind};
use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_proto::mcp::Implementation;
use brain_mcp_transport::{BuildError, ClientConfig, HttpClient, Secrets};

use crate::auth::Authorizers;
use crate::gate::ProbeGates;
use crate::limits::Limits;
use crate::servers::Servers;
use tokio_util::task::TaskTracker;
use tracing::instrument::WithSubscriber;

/// How long each background cleanup step (`notifications/cancelled`, the session DELETE) may take.
pub const CLEANUP_STEP_DEADLINE: Duration = Duration::from_secs(2);

/// The MCP client every call and discovery shares: pooled connections, the era of each
/// server, and the background tasks that close sessions off the caller's path.
///
/// Cheap to clone; clones share everything.
#[derive(Clone, Debug)]
pub struct McpClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: HttpClient,
    servers: Servers,
    identity: Identity,
    tasks: TaskTracker,
    next_id: AtomicI64,
    sessions: SessionCounts,
    probes: ProbeGates,
    authorizers: Authorizers,
    limits: Limits,
    /// The host config's `allow_private_auth_destinations`.
    allow_private_auth_destinations: AtomicBool,
    /// The class every server is taken to be in, instead of the one its URL gives: set
    /// only by tests, which simulate a server off loopback with it.
    server_class: std::sync::Mutex<Option<AddrClass>>,
    /// The host's token store, for the OAuth clients of bindings' `oauth` blocks.
    token_store: std::sync::Mutex<Option<crate::auth::Store>>,
}

/// Handshake-era sessions, counted as they open and end.
#[derive(Debug, Default)]
pub(crate) struct SessionCounts {
    opened: AtomicU64,
    closed: AtomicU64,
    close_failed: AtomicU64,
}

impl SessionCounts {
    /// The server gave a session id.
    pub(crate) fn opened(&self) {
        self.opened.fetch_add(1, Ordering::Relaxed);
    }

    /// The session's DELETE got its answer (`true`: the session is gone) or failed.
    pub(crate) fn ended(&self, closed: bool) {
        let count = if closed {
            &self.closed
        } else {
            &self.close_failed
        };
        count.fetch_add(1, Ordering::Relaxed);
    }
}

/// What one [`McpClient`] (and its clones) has done so far: a snapshot for health checks,
/// soak tests and dashboards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// Handshake-era sessions the servers opened (an `initialize` answered with a session
    /// id), for calls and discoveries.
    pub sessions_opened: u64,
    /// Sessions whose `DELETE` the server answered with 2xx, 404 (already gone) or 405
    /// (it does not end sessions on request).
    pub sessions_closed: u64,
    /// Sessions whose `DELETE` failed or was not answered within its deadline: the server
    /// may still hold them until its own timeout.
    pub sessions_close_failed: u64,
    /// Background cleanups (cancel notifications, DELETEs) still running.
    pub cleanup_running: usize,
    /// Connections the pool opened.
    pub connections_opened: u64,
    /// Connections open now, idle or in use.
    pub connections_open: u64,
    /// OAuth authorizers kept (one per server, credentials and principal), within
    /// [`McpClient::set_authorizer_limits`].
    pub authorizers: usize,
    /// What the authorizers kept weigh, by the client's estimate (their keys' and
    /// tokens' text plus a fixed cost each; docs/performance.md compares it with the
    /// memory measured).
    pub authorizer_bytes: usize,
}

impl McpClient {
    /// A client with the transport's default settings.
    pub fn new() -> Result<Self, BuildError> {
        Self::with_config(ClientConfig::default())
    }

    /// A client with the given transport settings (for example extra root certificates).
    pub fn with_config(config: ClientConfig) -> Result<Self, BuildError> {
        Ok(Self {
            inner: Arc::new(Inner {
                http: HttpClient::new(config)?,
                servers: Servers::default(),
                identity: Identity::new(Implementation::new(
                    "brain-mcp",
                    env!("CARGO_PKG_VERSION"),
                )),
                tasks: TaskTracker::new(),
                next_id: AtomicI64::new(1),
                sessions: SessionCounts::default(),
                probes: ProbeGates::default(),
                authorizers: Authorizers::default(),
                limits: Limits::default(),
                allow_private_auth_destinations: AtomicBool::new(false),
                server_class: std::sync::Mutex::new(None),
                token_store: std::sync::Mutex::new(None),
            }),
        })
    }

    /// Waits, at most `within`, for background cleanups (cancel notifications, session
    /// DELETEs) to finish. Returns whether all of them did. Call before the process exits.
    pub async fn flush(&self, within: Duration) -> bool {
        self.inner.tasks.close();
        let done = tokio::time::timeout(within, self.inner.tasks.wait())
            .await
            .is_ok();
        self.inner.tasks.reopen();
        done
    }

    /// Sessions, cleanups and connections so far. A session still open is
    /// `sessions_opened - sessions_closed - sessions_close_failed`, once no call runs.
    pub fn stats(&self) -> ClientStats {
        let sessions = &self.inner.sessions;
        let pool = self.inner.http.pool_stats();
        let (authorizers, authorizer_bytes) = self.inner.authorizers.usage();
        ClientStats {
            sessions_opened: sessions.opened.load(Ordering::Relaxed),
            sessions_closed: sessions.closed.load(Ordering::Relaxed),
            sessions_close_failed: sessions.close_failed.load(Ordering::Relaxed),
            cleanup_running: self.inner.tasks.len(),
            connections_opened: pool.connections_opened,
            connections_open: pool.connections_open,
            authorizers,
            authorizer_bytes,
        }
    }

    /// Keeps at most `max_entries` OAuth authorizers (the tokens of one server,
    /// credentials and principal) and `max_bytes` of them by the client's estimate
    /// (defaults [`DEFAULT_MAX_AUTHORIZERS`] and [`DEFAULT_MAX_AUTHORIZER_BYTES`]).
    /// Past either, the least recently used that no call holds are dropped one at a time
    /// (their next call loads or fetches its token again); see docs/authorization.md.
    /// Takes effect at once.
    ///
    /// [`DEFAULT_MAX_AUTHORIZERS`]: crate::DEFAULT_MAX_AUTHORIZERS
    /// [`DEFAULT_MAX_AUTHORIZER_BYTES`]: crate::DEFAULT_MAX_AUTHORIZER_BYTES
    pub fn set_authorizer_limits(&self, max_entries: usize, max_bytes: usize) {
        self.inner.authorizers.set_limits(max_entries, max_bytes);
    }

    /// The session counters.
    pub(crate) fn sessions(&self) -> &SessionCounts {
        &self.inner.sessions
    }

    /// Sets the era of the server at `url` (as written in bindings), skipping the probe.
    /// For servers that speak both eras this picks one; operators and tests use it to
    /// force the handshake against a dual-era server.
    pub fn set_era(&self, url: &str, era: Era) {
        self.inner.servers.learned(url, ServerKind::Http, era);
    }

    /// The era learned (or set) for the server at `url`, if any.
    pub fn era(&self, url: &str) -> Option<Era> {
        self.inner.servers.era(url)
    }

    /// Lets URLs a server names for authorization reach private, link-local and
    /// unique-local addresses whatever network the server is on (the host config's
    /// `allow_private_auth_destinations`; `false` at first). Loopback stays reachable only
    /// for servers on loopback. Takes effect at the next token request.
    pub fn set_allow_private_auth_destinations(&self, allow: bool) {
        self.inner
            .allow_private_auth_destinations
            .store(allow, Ordering::Relaxed);
    }

    /// Keeps the tokens of bindings' `oauth` blocks in `store` (the host config's
    /// `token_store`), shared with every process using it; `None`: in this process only.
    /// OAuth clients an embedder gives keep the store they were given.
    pub fn set_token_store(&self, store: Option<Arc<dyn crate::TokenStore>>) {
        *self
            .inner
            .token_store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = store.map(crate::auth::Store);
    }

    /// The host's token store, if set ([`Self::set_token_store`]).
    pub fn token_store(&self) -> Option<Arc<dyn crate::TokenStore>> {
        self.inner
            .token_store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(|s| s.0.clone())
    }

    /// Whether URLs a server names may reach private addresses for every server (see
    /// [`Self::set_allow_private_auth_destinations`]).
    pub fn allows_private_auth_destinations(&self) -> bool {
        self.inner
            .allow_private_auth_destinations
            .load(Ordering::Relaxed)
    }

    /// The class every server is taken to be in, when a test set one; else `None` (each
    /// server's class is the one its URL gives).
    pub(crate) fn server_class_given(&self) -> Option<AddrClass> {
        *self
            .inner
            .server_class
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes every server to be in `class`: only for tests, which simulate a server off
    /// loopback with it (their servers all listen on 127.0.0.1).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn take_servers_as(&self, class: AddrClass) {
        *self
            .inner
            .server_class
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(class);
    }

    /// The HTTP client.
    pub(crate) fn http(&self) -> &HttpClient {
        &self.inner.http
    }

    /// The credentials of the client's proxies (see [`HttpClient::proxy_secrets`]): every
    /// target's secrets include them.
    pub fn proxy_secrets(&self) -> &Secrets {
        self.inner.http.proxy_secrets()
    }

    /// Every server's state: era and health.
    pub(crate) fn servers(&self) -> &Servers {
        &self.inner.servers
    }

    /// The era probes in flight, one per server.
    pub(crate) fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    pub(crate) fn authorizers(&self) -> &Authorizers {
        &self.inner.authorizers
    }

    pub(crate) fn probes(&self) -> &ProbeGates {
        &self.inner.probes
    }

    /// Who we are: `clientInfo`, and no capability declared.
    pub(crate) fn identity(&self) -> &Identity {
        &self.inner.identity
    }

    /// A request id unique within this process.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Runs `work` in the background, tracked so [`Self::flush`] can wait for it.
    /// Without a runtime (the process is shutting down) the work is skipped.
    pub(crate) fn spawn_cleanup<F>(&self, work: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            // The caller's subscriber follows the cleanup, so its events land where the
            // call's did.
            self.inner
                .tasks
                .spawn_on(work.with_current_subscriber(), &handle);
        }
    }
}
