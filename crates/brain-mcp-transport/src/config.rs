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
    /// Bound on DNS plus TCP connect (default 10 s).
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

impl ClientConfig {
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
