//! The shared client state: one HTTP pool, the era cache, request ids and background cleanup.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_proto::mcp::Implementation;
use brain_mcp_transport::{BearerToken, BuildError, ClientConfig, HttpClient};
use http::Uri;
use tokio_util::task::TaskTracker;

use crate::era::EraCache;

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
    info: Implementation,
    tasks: TaskTracker,
    next_id: AtomicI64,
}

/// Where a request goes: the endpoint and the token for it.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The MCP endpoint.
    pub(crate) url: Uri,
    /// The endpoint as configured, the era cache key.
    pub(crate) key: String,
    /// The bearer token, sent only to this endpoint's origin.
    pub(crate) bearer: Option<BearerToken>,
}

impl Target {
    /// A target for `url`, which must be an absolute http or https URL.
    pub(crate) fn new(url: &str, bearer: Option<BearerToken>) -> Result<Self, String> {
        let parsed: Uri = url
            .parse()
            .map_err(|e| format!("invalid URL {url:?}: {e}"))?;
        match parsed.scheme_str() {
            Some("http" | "https") if parsed.authority().is_some() => {}
            _ => return Err(format!("invalid URL {url:?}: must be an http or https URL")),
        }
        Ok(Self {
            url: parsed,
            key: url.to_owned(),
            bearer,
        })
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
                info: Implementation::new("brain-mcp", env!("CARGO_PKG_VERSION")),
                tasks: TaskTracker::new(),
                next_id: AtomicI64::new(1),
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

    /// Sets the era of the server at `url` (as written in bindings), skipping the probe.
    /// For servers that speak both eras this picks one; operators and tests use it to
    /// force the handshake against a dual-era server.
    pub fn set_era(&self, url: &str, era: crate::Era) {
        self.inner.eras.set(url, era);
    }

    /// The era learned (or set) for the server at `url`, if any.
    pub fn era(&self, url: &str) -> Option<crate::Era> {
        self.inner.eras.get(url)
    }

    /// The HTTP client.
    pub(crate) fn http(&self) -> &HttpClient {
        &self.inner.http
    }

    /// The era cache.
    pub(crate) fn eras(&self) -> &EraCache {
        &self.inner.eras
    }

    /// Our implementation info, sent as `clientInfo`.
    pub(crate) fn info(&self) -> &Implementation {
        &self.inner.info
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
            self.inner.tasks.spawn_on(work, &handle);
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
    }
}
