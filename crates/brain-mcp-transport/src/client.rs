//! The pooled HTTP client: TLS, the connection pool (`pool`), redirects,
//! stale-connection retry.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, LOCATION, PROXY_AUTHORIZATION, USER_AGENT};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;

use crate::resolve::Resolver;

use brain_mcp_proto::text::Secrets;

use crate::coarse::CoarseTimer;
use crate::config::ClientConfig;
use crate::error::{Delivery, ErrorKind, TransportError, find_source};
use crate::observe::ExchangeLog;
use crate::origin::{origin, shared, to_uri};
use crate::pool::{Failure, Pool, PoolStats, Reply};
use crate::proxy::{InvalidProxy, Proxies, ProxyConnector, ProxyError, Route};

/// A cheap-to-clone handle on one connection pool. Clones share the pool.
#[derive(Clone)]
pub struct HttpClient {
    pub(crate) inner: Arc<Inner>,
}

/// How late a background request's deadline may fire (see [`CoarseTimer`]).
pub const BACKGROUND_GRID: std::time::Duration = std::time::Duration::from_millis(100);

pub(crate) struct Inner {
    /// The connections, per origin, and the requests waiting for one.
    pub(crate) pool: Arc<Pool>,
    pub(crate) config: ClientConfig,
    /// Which destinations go through which proxy, resolved when the client was built.
    proxies: Arc<Proxies>,
    pub(crate) user_agent: Option<HeaderValue>,
    /// Deadlines of background requests (see [`HttpClient::background_timer`]).
    background_timer: CoarseTimer,
    /// The proxies' credentials: removed from every error and log line.
    pub(crate) proxy_secrets: Secrets,
    /// The pool's resolver, for the destination rule's own lookups (`reach`).
    pub(crate) resolver: Resolver,
    /// The TLS settings before ALPN, for connections of their own (`reach`).
    pub(crate) tls: rustls::ClientConfig,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Why an [`HttpClient`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An extra root certificate was rejected.
    #[error("extra root certificate {index} is not a valid CA certificate")]
    BadRoot {
        /// Its position in [`ClientConfig::extra_roots`].
        index: usize,
        /// What rustls said.
        #[source]
        source: rustls::Error,
    },
    /// The TLS configuration was rejected.
    #[error("TLS configuration failed")]
    Tls(#[source] rustls::Error),
    /// The user agent is not a valid header value.
    #[error("the configured user agent is not a valid header value")]
    UserAgent,
    /// The explicit proxy setting cannot be used; the message never shows its credentials.
    #[error("{0}")]
    Proxy(InvalidProxy),
}

/// Builds the headers of one request. Called once per attempt, so the first attempt
/// owns its map and no copy is kept for a resend that rarely comes.
pub(crate) type HeaderSource<'a> = &'a (dyn Fn() -> Result<HeaderMap, TransportError> + Sync);

/// One HTTP request as the transport sends it (re-sendable: the body is `Bytes`).
pub(crate) struct Outgoing<'a> {
    pub(crate) method: Method,
    pub(crate) url: Uri,
    pub(crate) headers: HeaderSource<'a>,
    pub(crate) body: Bytes,
    /// The request has no side effects: it may be resent once on a stale connection.
    pub(crate) idempotent: bool,
    /// Cleanup off the caller's path (the session DELETE): it takes its turn on the open
    /// connections and opens none while one is open (see `load`).
    pub(crate) background: bool,
    /// Same-origin 307/308 redirects are followed; otherwise every redirect is returned
    /// as the response (authorization requests read its `Location`).
    pub(crate) follow: bool,
}

impl HttpClient {
    /// Builds a client: rustls with ring, HTTP/1.1 and h2 by ALPN, plain `http` too. The
    /// proxy setting is resolved now (the environment is read once, here).
    pub fn new(config: ClientConfig) -> Result<Self, BuildError> {
        let proxies = Arc::new(config.proxy.resolve().map_err(BuildError::Proxy)?);
        let proxy_secrets = proxies.secrets().clone();
        let mut roots = rustls::RootCertStore::empty();
        if config.native_roots {
            // Unreadable platform certificates are skipped. With no roots at all the
            // client still serves plain `http`; `https` then fails as a TLS error.
            let native = rustls_native_certs::load_native_certs();
            let _ = roots.add_parsable_certificates(native.certs);
        }
        for (index, cert) in config.extra_roots.iter().enumerate() {
            roots
                .add(cert.clone())
                .map_err(|source| BuildError::BadRoot { index, source })?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(BuildError::Tls)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let resolver = Resolver::new();
        let mut http = HttpConnector::new_with_resolver(resolver.clone());
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.connect_timeout));
        let inner = ProxyConnector::new(http, tls.clone(), proxies.clone(), config.connect_timeout);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls.clone())
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(inner);
        // The whole connect, TLS included, is bounded: a connect under way to an origin
        // whose protocol is not known yet holds the other requests' connects back.
        let pool = Arc::new(Pool::new(
            https,
            config.pool_idle_timeout,
            config.pool_max_idle_per_host,
            config.connect_timeout.saturating_mul(2),
        ));
        let user_agent = match &config.user_agent {
            Some(ua) => Some(HeaderValue::from_str(ua).map_err(|_| BuildError::UserAgent)?),
            None => None,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                config,
                proxies,
                user_agent,
                background_timer: CoarseTimer::new(BACKGROUND_GRID),
                proxy_secrets,
                resolver,
                tls,
            }),
        })
    }

    /// The shared, coarse deadlines for background work on this client (a session
    /// `DELETE` here, a message that gets no answer in the binding): they fire up to
    /// about [`BACKGROUND_GRID`] late and do not wake the runtime once per request.
    pub fn background_timer(&self) -> &CoarseTimer {
        &self.inner.background_timer
    }

    /// The credentials of this client's proxies, in every form they are sent (the
    /// password, `user:password`, the `Basic` value): whatever a proxy or a server echoes
    /// must be redacted with these too, as the transport does with its own errors and
    /// logs.
    pub fn proxy_secrets(&self) -> &Secrets {
        &self.inner.proxy_secrets
    }

    /// Whether a request to `url` goes directly, not through a proxy (nor refused by an
    /// unusable proxy setting).
    pub(crate) fn goes_direct(&self, url: &Uri) -> bool {
        matches!(self.inner.proxies.route(url), Route::Direct)
    }

    /// How many connections the pool has opened, and how many are open now.
    pub fn pool_stats(&self) -> PoolStats {
        self.inner.pool.stats()
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Sends `out`, following same-origin 307/308 redirects and resending an
    /// idempotent request once when a pooled connection turns out stale. Returns the
    /// final response (any status other than a followed redirect); its body holds the
    /// [`Lease`](crate::pool::Lease) on its connection until the body is dropped.
    pub(crate) async fn send(
        &self,
        out: Outgoing<'_>,
        log: &mut ExchangeLog,
    ) -> Result<Response<Reply>, TransportError> {
        let mut url = out.url;
        let mut hops = 0;
        let mut resent = false;
        loop {
            // An `http` request a proxy forwards carries the proxy's credentials; an
            // `https` one is tunnelled, and they went with the CONNECT.
            let forwarded = match self.inner.proxies.route(&url) {
                Route::Via(proxy) if url.scheme_str() == Some("http") => Some(proxy),
                _ => None,
            };
            let mut req = Request::new(Full::new(out.body.clone()));
            *req.method_mut() = out.method.clone();
            *req.uri_mut() = url.clone();
            *req.headers_mut() = (out.headers)()?;
            if let Some(ua) = &self.inner.user_agent {
                req.headers_mut()
                    .entry(USER_AGENT)
                    .or_insert_with(|| ua.clone());
            }
            if let Some(auth) = forwarded.as_ref().and_then(|p| p.basic_auth()) {
                req.headers_mut().insert(PROXY_AUTHORIZATION, auth.clone());
            }
            let timer = self.background_timer();
            let mut lease = self.inner.pool.checkout(&url, out.background, timer).await;
            let resp = match lease.send(&url, req, timer).await {
                Ok(resp) => {
                    lease.headed();
                    resp
                }
                Err(err) => {
                    // An unsent request may always go again; one that may have been
                    // written only when it has no side effects.
                    let again = err.unsent() || (out.idempotent && is_stale(&err));
                    if again && !resent {
                        log.resent();
                        resent = true;
                        continue;
                    }
                    let err = classify(err, &out.method, &url);
                    log.end(err.kind_name());
                    return Err(err);
                }
            };
            let status = resp.status();
            if let Some(proxy) = &forwarded
                && status == StatusCode::PROXY_AUTHENTICATION_REQUIRED
            {
                // Only a proxy answers 407: the request was not forwarded.
                let refused =
                    ProxyError::refused(proxy.uri(), status, proxy.basic_auth().is_some());
                return Err(proxy_error(&refused, &out.method, &url));
            }
            if !status.is_redirection() || !out.follow {
                log.response(&resp);
                return Ok(resp.map(|body| Reply::new(body, Some(lease))));
            }
            log.redirected();
            let target = redirect_target(&out.method, &url, status, resp.headers())?;
            hops += 1;
            if hops > self.inner.config.max_redirects {
                return Err(redirect_error(&out.method, &url, "too many redirects"));
            }
            // The redirect body is small; dropping it may close the connection, which
            // costs one reconnect at most.
            drop(resp);
            url = target;
        }
    }
}

/// `METHOD scheme://host:port` of an exchange, for messages; written out only when a
/// message needs it (most exchanges never fail).
pub(crate) fn place(method: &Method, url: &Uri) -> Place {
    Place {
        method: method.clone(),
        url: url.clone(),
    }
}

/// Where an exchange went, shown as `METHOD scheme://host:port` (see [`origin`]).
#[derive(Clone, Debug)]
pub(crate) struct Place {
    method: Method,
    url: Uri,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, origin(&self.url))
    }
}

fn redirect_error(method: &Method, url: &Uri, what: &str) -> TransportError {
    TransportError::new(
        ErrorKind::Redirect,
        Delivery::Answered,
        format!("{}: {what}", place(method, url)),
    )
}

fn redirect_target(
    method: &Method,
    url: &Uri,
    status: StatusCode,
    headers: &HeaderMap,
) -> Result<Uri, TransportError> {
    if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT {
        return Err(redirect_error(
            method,
            url,
            &format!("the server answered {status}; only 307 and 308 redirects are followed"),
        ));
    }
    let base = shared(url);
    let target = headers
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|loc| base.as_ref()?.resolve(loc))
        .and_then(|target| Some((to_uri(&target)?, target)));
    let Some((uri, target)) = target else {
        return Err(redirect_error(
            method,
            url,
            "a redirect without a usable Location",
        ));
    };
    if !base.is_some_and(|base| base.same_origin(&target)) {
        return Err(redirect_error(
            method,
            url,
            &format!(
                "a redirect to another origin ({}) was refused; nothing was sent there",
                target.origin()
            ),
        ));
    }
    Ok(uri)
}

/// True when hyper reports that a connection closed under a request it had (maybe)
/// written: the classic race with a server closing an idle keep-alive connection.
fn is_stale(err: &Failure) -> bool {
    let Failure::Send { error, .. } = err else {
        return false;
    };
    if error.is_incomplete_message() {
        return true;
    }
    find_source::<io::Error>(error).is_some_and(|io| {
        matches!(
            io.kind(),
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof
        )
    })
}

/// A failure to connect through a proxy, as the error of a request to `url`.
fn proxy_error(e: &ProxyError, method: &Method, url: &Uri) -> TransportError {
    TransportError::new(
        e.kind.clone(),
        Delivery::NotSent,
        format!("{}: {e}", place(method, url)),
    )
    .with_proxy_status(e.status)
}

pub(crate) fn classify(err: Failure, method: &Method, url: &Uri) -> TransportError {
    let at = place(method, url);
    match err {
        Failure::Connect(err) => {
            if let Some(proxy) = find_source::<ProxyError>(&*err) {
                return proxy_error(proxy, method, url);
            }
            let (kind, what) = if find_source::<rustls::Error>(&*err).is_some() {
                (ErrorKind::Tls, "the TLS handshake failed")
            } else if find_source::<io::Error>(&*err)
                .is_some_and(|e| e.kind() == io::ErrorKind::TimedOut)
            {
                (ErrorKind::Timeout, "connecting timed out")
            } else {
                (ErrorKind::Connect, "connecting failed")
            };
            TransportError::new(kind, Delivery::NotSent, format!("{at}: {what}")).with_source(err)
        }
        Failure::Send { error, unsent } => {
            // hyper handed the request back unsent: it never left.
            let delivery = match unsent {
                true => Delivery::NotSent,
                false => Delivery::MaybeSent,
            };
            TransportError::new(
                ErrorKind::Io,
                delivery,
                format!("{at}: the connection failed before a reply arrived"),
            )
            .with_source(error)
        }
    }
}
