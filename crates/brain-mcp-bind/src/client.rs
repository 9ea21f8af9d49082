//! The shared client state: one HTTP pool, the era cache, request ids and background cleanup.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use brain_mcp_proto::client::era::{Era, EraCache};
use brain_mcp_proto::client::{Header, Identity};
use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_proto::mcp::Implementation;
use brain_mcp_transport::{BearerToken, BuildError, ClientConfig, HttpClient, Secrets};
use brain_tools_core::EndpointUrl;

use crate::probe::ProbeGates;
use http::Uri;
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
    eras: EraCache,
    identity: Identity,
    tasks: TaskTracker,
    next_id: AtomicI64,
    sessions: SessionCounts,
    probes: ProbeGates,
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
}

/// Where a request goes: the endpoint, the token for it, and the extra headers every
/// request to it carries.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The MCP endpoint.
    pub(crate) url: Uri,
    /// The endpoint as configured, the era cache key.
    pub(crate) key: String,
    /// `scheme://host[:port]`, what logs and messages name: never the path or query.
    pub(crate) origin: String,
    /// The bearer token, sent only to this endpoint's origin.
    pub(crate) bearer: Option<BearerToken>,
    /// The binding's extra headers (checked by `brain_tools_core::check_headers`), for
    /// every request: POSTs, resuming GETs, DELETEs. Marked sensitive, so hyper and
    /// `Debug` never show a value.
    pub(crate) headers: Vec<Header>,
    /// Every secret of a call to this target (the token, the client's proxy credentials):
    /// removed from everything the server or a proxy says before anyone sees it.
    pub(crate) secrets: Secrets,
}

impl Target {
    /// A target for `url`, checked with the config loader's rule ([`EndpointUrl`]), so a
    /// URL that loads is one the HTTP layer can send to. The error never repeats the URL.
    pub(crate) fn new(url: &str, bearer: Option<BearerToken>) -> Result<Self, String> {
        let checked = EndpointUrl::parse(url).map_err(|reason| format!("the URL {reason}"))?;
        Self::checked(&checked, bearer)
    }

    /// A target for a URL the config loader already checked (a binding's): the rule is
    /// not run again on every call.
    pub(crate) fn checked(url: &EndpointUrl, bearer: Option<BearerToken>) -> Result<Self, String> {
        // The rule accepts a subset of what `Uri` parses; a failure here is a bug in the
        // rule, reported rather than trusted.
        let parsed: Uri = url
            .as_str()
            .parse()
            .map_err(|_| format!("the URL of {} cannot be sent to", url.origin()))?;
        let secrets = Secrets::new(bearer.as_ref().map(BearerToken::expose));
        Ok(Self {
            url: parsed,
            key: url.as_str().to_owned(),
            origin: url.origin().to_owned(),
            bearer,
            headers: Vec::new(),
            secrets,
        })
    }

    /// `scheme://host[:port]`, for logs: never the path or query, which may hold keys.
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// This target with `headers` (a binding's, already checked) on every request.
    pub(crate) fn with_headers(mut self, headers: &[(String, String)]) -> Self {
        self.headers = headers
            .iter()
            .map(|(name, value)| Header::sensitive(name.to_ascii_lowercase(), value.clone()))
            .collect();
        self
    }

    /// `headers` followed by this target's own.
    pub(crate) fn and_headers(&self, mut headers: Vec<Header>) -> Vec<Header> {
        headers.extend(self.headers.iter().cloned());
        headers
    }

    /// This target with `more` secrets to remove (the client's proxy credentials).
    pub(crate) fn with_secrets(mut self, more: &Secrets) -> Self {
        self.secrets = self.secrets.union(more);
        self
    }

    /// `text` with every secret of this target removed (see [`Secrets::redact`]).
    pub(crate) fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.secrets.redact(text)
    }
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
                eras: EraCache::default(),
                identity: Identity::new(Implementation::new(
                    "brain-mcp",
                    env!("CARGO_PKG_VERSION"),
                )),
                tasks: TaskTracker::new(),
                next_id: AtomicI64::new(1),
                sessions: SessionCounts::default(),
                probes: ProbeGates::default(),
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
        ClientStats {
            sessions_opened: sessions.opened.load(Ordering::Relaxed),
            sessions_closed: sessions.closed.load(Ordering::Relaxed),
            sessions_close_failed: sessions.close_failed.load(Ordering::Relaxed),
            cleanup_running: self.inner.tasks.len(),
            connections_opened: pool.connections_opened,
            connections_open: pool.connections_open,
        }
    }

    /// The session counters.
    pub(crate) fn sessions(&self) -> &SessionCounts {
        &self.inner.sessions
    }

    /// Sets the era of the server at `url` (as written in bindings), skipping the probe.
    /// For servers that speak both eras this picks one; operators and tests use it to
    /// force the handshake against a dual-era server.
    pub fn set_era(&self, url: &str, era: Era) {
        self.inner.eras.set(url, era);
    }

    /// The era learned (or set) for the server at `url`, if any.
    pub fn era(&self, url: &str) -> Option<Era> {
        self.inner.eras.get(url)
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

    /// The era cache.
    pub(crate) fn eras(&self) -> &EraCache {
        &self.inner.eras
    }

    /// The era probes in flight, one per server.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_need_http_urls() {
        assert!(Target::new("http://127.0.0.1:1/mcp", None).is_ok());
        assert!(Target::new("https://example.test/mcp", None).is_ok());
        let err = Target::new("ftp://x/mcp", None).expect_err("not http");
        assert!(err.contains("must be an http or https URL"), "{err}");
        assert!(Target::new("not a url", None).is_err());
        assert!(Target::new("/mcp", None).is_err());
        // The message never repeats the URL: its query may hold a key.
        let err = Target::new("http://h/mcp?key=s3cret&q=<x>", None).expect_err("bad char");
        assert!(!err.contains("s3cret"), "{err}");
        let target = Target::new("HTTP://H.example:8080/mcp?key=s3cret", None).expect("valid");
        assert_eq!(target.url.host(), Some("H.example"));
    }

    proptest::proptest! {
        /// Whatever the rule accepts, the HTTP layer can send to, at the same origin.
        #[test]
        fn the_rule_accepts_only_what_http_sends(
            scheme in "https?|HTTP",
            host in "[a-z0-9_-]{1,10}(\\.[a-z0-9x-]{1,10}){0,2}|\\[::1\\]|127\\.0\\.0\\.1|[0-9]{1,3}(\\.[0-9]{1,3}){0,3}",
            port in proptest::option::of(1u16..),
            tail in "[ -~]{0,40}",
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let url = format!("{scheme}://{host}{port}/{tail}");
            if let Ok(checked) = EndpointUrl::parse(&url) {
                let target = Target::new(&url, None);
                proptest::prop_assert!(target.is_ok(), "{url}: {:?}", target.err());
                let uri = target.map(|t| t.url).ok();
                let origin = uri.as_ref().map(|u| {
                    let host = u.host().unwrap_or_default().to_ascii_lowercase();
                    let scheme = u.scheme_str().unwrap_or_default().to_ascii_lowercase();
                    match u.port_u16() {
                        Some(p) => format!("{scheme}://{host}:{p}"),
                        None => format!("{scheme}://{host}"),
                    }
                });
                proptest::prop_assert_eq!(origin, Some(checked.origin().to_owned()));
                // And TLS accepts the host as a server name, so https fails at load, not
                // at call time.
                let host = host.trim_start_matches('[').trim_end_matches(']');
                proptest::prop_assert!(
                    rustls::pki_types::ServerName::try_from(host.to_owned()).is_ok(),
                    "{url}: TLS refuses {host}"
                );
            }
        }
    }
}
