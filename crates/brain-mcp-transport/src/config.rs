//! Client configuration.

use std::time::Duration;

use rustls::pki_types::CertificateDer;

use crate::proxy::ProxyConfig;

/// Settings of an [`HttpClient`](crate::HttpClient). `Default` gives production values.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Trust the platform's root certificates (default true).
    pub native_roots: bool,
    /// Extra trusted root certificates (DER), for example a private CA.
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// Bound on DNS plus TCP connect (default 10 s). The whole connect, a proxy's
    /// `CONNECT` and the TLS handshake included, is bounded by twice this.
    pub connect_timeout: Duration,
    /// How long an idle pooled connection is kept. Keep it below common server
    /// keep-alive timeouts (Node closes after 5 s) to avoid reusing a connection the
    /// server is closing (default 4 s).
    pub pool_idle_timeout: Duration,
    /// Idle connections kept per origin (default: no limit; `pool_idle_timeout` closes
    /// them). A limit below the number of calls a host runs at once against one server
    /// makes the pool close connections that the next calls then open again.
    pub pool_max_idle_per_host: usize,
    /// Whether a session `DELETE`, which runs off the caller's path, may open a
    /// connection of its own (default false). When false it waits its turn on the
    /// connections already open to the server (with one spare connection for them per
    /// server), so a host running C calls at once keeps C + 1 connections; when true the DELETEs add connections of their own (up to
    /// one per call in flight) and calls never wait behind them.
    pub cleanup_opens_connections: bool,
    /// Largest single SSE event accepted, in bytes; the exchange budget also applies
    /// (default 16 MiB).
    pub sse_event_limit: usize,
    /// Largest message other than our response that an event stream may carry (progress,
    /// log lines, requests to the client), in bytes (default 256 KiB). Such messages do
    /// not spend the exchange budget, which is kept for the response: a long tool may
    /// report progress for hours.
    pub message_limit: usize,
    /// Bytes of an error body read to find a JSON-RPC error (default 64 KiB).
    pub error_body_limit: usize,
    /// After our response, the rest of the body is read for at most this many bytes
    /// and this long so the connection can be reused; otherwise it is closed
    /// (defaults 64 KiB, 50 ms).
    pub drain_limit: usize,
    /// See [`drain_limit`](Self::drain_limit).
    pub drain_timeout: Duration,
    /// Same-origin 307/308 redirects followed per request (default 3).
    pub max_redirects: usize,
    /// Wait before a resume GET when the server sent no `retry` (default 1 s).
    pub default_retry: Duration,
    /// Upper bound on a server-requested `retry` wait (default 30 s).
    pub max_retry: Duration,
    /// Sent as `User-Agent` when set (a request's own `User-Agent` header wins).
    pub user_agent: Option<String>,
    /// Which proxy to use (default: the environment's, read when the client is built;
    /// loopback destinations never go through it). See [`ProxyConfig`].
    pub proxy: ProxyConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            native_roots: true,
            extra_roots: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: Duration::from_secs(4),
            pool_max_idle_per_host: usize::MAX,
            cleanup_opens_connections: false,
            sse_event_limit: 16 << 20,
            message_limit: 256 << 10,
            error_body_limit: 64 << 10,
            drain_limit: 64 << 10,
            drain_timeout: Duration::from_millis(50),
            max_redirects: 3,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(30),
            user_agent: None,
            proxy: ProxyConfig::default(),
        }
    }
}

/// A builder in all but name: start from `ClientConfig::default()` and chain `with_*`
/// (the fields stay public for reading, and for code that sets them one by one).
impl ClientConfig {
    /// This configuration with whether the platform's root certificates are trusted set to `value` (see [`Self::native_roots`]).
    #[must_use]
    pub fn with_native_roots(mut self, value: bool) -> Self {
        self.native_roots = value;
        self
    }

    /// This configuration with the bound on DNS plus TCP connect set to `value` (see [`Self::connect_timeout`]).
    #[must_use]
    pub fn with_connect_timeout(mut self, value: Duration) -> Self {
        self.connect_timeout = value;
        self
    }

    /// This configuration with how long an idle pooled connection is kept set to `value` (see [`Self::pool_idle_timeout`]).
    #[must_use]
    pub fn with_pool_idle_timeout(mut self, value: Duration) -> Self {
        self.pool_idle_timeout = value;
        self
    }

    /// This configuration with the idle connections kept per origin set to `value` (see [`Self::pool_max_idle_per_host`]).
    #[must_use]
    pub fn with_pool_max_idle_per_host(mut self, value: usize) -> Self {
        self.pool_max_idle_per_host = value;
        self
    }

    /// This configuration with whether a session DELETE may open a connection of its own set to `value` (see [`Self::cleanup_opens_connections`]).
    #[must_use]
    pub fn with_cleanup_opens_connections(mut self, value: bool) -> Self {
        self.cleanup_opens_connections = value;
        self
    }

    /// This configuration with the largest SSE event accepted set to `value` (see [`Self::sse_event_limit`]).
    #[must_use]
    pub fn with_sse_event_limit(mut self, value: usize) -> Self {
        self.sse_event_limit = value;
        self
    }

    /// This configuration with the largest message besides our response a stream may carry set to `value` (see [`Self::message_limit`]).
    #[must_use]
    pub fn with_message_limit(mut self, value: usize) -> Self {
        self.message_limit = value;
        self
    }

    /// This configuration with the bytes of an error body read set to `value` (see [`Self::error_body_limit`]).
    #[must_use]
    pub fn with_error_body_limit(mut self, value: usize) -> Self {
        self.error_body_limit = value;
        self
    }

    /// This configuration with the same-origin redirects followed per request set to `value` (see [`Self::max_redirects`]).
    #[must_use]
    pub fn with_max_redirects(mut self, value: usize) -> Self {
        self.max_redirects = value;
        self
    }

    /// This configuration with the wait before a resume when the server sent no `retry` set to `value` (see [`Self::default_retry`]).
    #[must_use]
    pub fn with_default_retry(mut self, value: Duration) -> Self {
        self.default_retry = value;
        self
    }

    /// This configuration with the bound on a server-requested `retry` wait set to `value` (see [`Self::max_retry`]).
    #[must_use]
    pub fn with_max_retry(mut self, value: Duration) -> Self {
        self.max_retry = value;
        self
    }

    /// This configuration with which proxy to use set to `value` (see [`Self::proxy`]).
    #[must_use]
    pub fn with_proxy(mut self, value: ProxyConfig) -> Self {
        self.proxy = value;
        self
    }

    /// This configuration sending `value` as `User-Agent`.
    #[must_use]
    pub fn with_user_agent(mut self, value: impl Into<String>) -> Self {
        self.user_agent = Some(value.into());
        self
    }

    /// This configuration trusting the root certificates of `pem` as well.
    pub fn with_pem_roots(mut self, pem: &[u8]) -> Result<Self, rustls::pki_types::pem::Error> {
        self.add_pem_roots(pem)?;
        Ok(self)
    }

    /// Adds root certificates from PEM text (`-----BEGIN CERTIFICATE-----` blocks).
    pub fn add_pem_roots(&mut self, pem: &[u8]) -> Result<usize, rustls::pki_types::pem::Error> {
        use rustls::pki_types::pem::PemObject;
        let mut n = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            self.extra_roots.push(cert?);
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_chain_from_the_default() {
        let config = ClientConfig::default()
            .with_connect_timeout(Duration::from_secs(3))
            .with_user_agent("brain-test/1")
            .with_native_roots(false)
            .with_max_redirects(0);
        assert_eq!(config.connect_timeout, Duration::from_secs(3));
        assert_eq!(config.user_agent.as_deref(), Some("brain-test/1"));
        assert!(!config.native_roots);
        assert_eq!(config.max_redirects, 0);
        assert!(
            ClientConfig::default()
                .with_pem_roots(
                    b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"
                )
                .is_err()
        );
    }
}
