//! The connector under TLS: a direct TCP connection, or one to a proxy, forwarding
//! (`http` destinations) or tunnelled with `CONNECT` (`https` destinations, TLS to the
//! destination then runs inside the tunnel).
//!
//! The `CONNECT` exchange uses hyper's own HTTP/1.1 client and upgrade, rather than
//! hyper-util's `Tunnel`, whose error neither says which status the proxy answered nor
//! can be named to be recognised.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HOST, HeaderValue, PROXY_AUTHORIZATION};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::Empty;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::upgrade::Upgraded;
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};

use crate::resolve::Resolver;

/// TCP connections with this client's resolver.
pub(crate) type Dialer = HttpConnector<Resolver>;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::{Proxies, Route};
use crate::error::{ErrorKind, find_source};
use crate::origin::origin;

type BoxError = Box<dyn StdError + Send + Sync>;

/// Largest `CONNECT` answer head read from a proxy.
const MAX_CONNECT_ANSWER: usize = 64 * 1024;

/// Connects to a destination directly or through the proxy its route names.
#[derive(Clone)]
pub(crate) struct ProxyConnector {
    direct: Dialer,
    /// To the proxy itself: plain TCP, or TLS for an `https://` proxy (HTTP/1.1 only).
    to_proxy: HttpsConnector<Dialer>,
    proxies: Arc<Proxies>,
    /// Bound on reaching the proxy and getting its tunnel.
    timeout: Duration,
}

impl ProxyConnector {
    pub(crate) fn new(
        direct: Dialer,
        tls: rustls::ClientConfig,
        proxies: Arc<Proxies>,
        timeout: Duration,
    ) -> Self {
        let to_proxy = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(direct.clone());
        Self {
            direct,
            to_proxy,
            proxies,
            timeout,
        }
    }
}

impl tower_service::Service<Uri> for ProxyConnector {
    type Response = ProxyStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxyStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Both inner connectors are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        match self.proxies.route(&dst) {
            Route::Direct => {
                let connecting = tower_service::Service::call(&mut self.direct, dst);
                Box::pin(async move { Ok(ProxyStream::Direct(connecting.await?)) })
            }
            Route::Refused(reason) => {
                Box::pin(async move { Err(ProxyError::unusable(&reason).into()) })
            }
            Route::Via(intercept) => {
                let proxy = intercept.uri().clone();
                let auth = intercept.basic_auth().cloned();
                let connecting = tower_service::Service::call(&mut self.to_proxy, proxy.clone());
                let timeout = self.timeout;
                Box::pin(async move {
                    let work = async {
                        let io = connecting
                            .await
                            .map_err(|e| ProxyError::reaching(&proxy, &*e))?;
                        if dst.scheme_str() == Some("https") {
                            Ok(ProxyStream::Tunnel(tunnel(io, &proxy, &dst, auth).await?))
                        } else {
                            Ok(ProxyStream::Forward(Box::new(io)))
                        }
                    };
                    match tokio::time::timeout(timeout, work).await {
                        Ok(result) => result.map_err(|e: ProxyError| e.into()),
                        Err(_) => Err(ProxyError::timeout(&proxy, timeout).into()),
                    }
                })
            }
        }
    }
}

/// Opens a `CONNECT` tunnel to `dst` over `io`, a connection to `proxy`.
async fn tunnel<T>(
    io: T,
    proxy: &Uri,
    dst: &Uri,
    auth: Option<HeaderValue>,
) -> Result<Upgraded, ProxyError>
where
    T: Read + Write + Unpin + Send + 'static,
{
    let closed = |e: hyper::Error| ProxyError::closed(proxy, &e);
    let credentials = auth.is_some();
    let host = dst.host().unwrap_or_default();
    let port = dst.port_u16().unwrap_or(443);
    let authority = format!("{host}:{port}");
    let mut req = Request::new(Empty::<Bytes>::new());
    *req.method_mut() = Method::CONNECT;
    *req.uri_mut() = authority.parse().map_err(|_| {
        ProxyError::new(
            ErrorKind::InvalidRequest,
            "the destination cannot be named in a CONNECT request".into(),
        )
    })?;
    let host_value = HeaderValue::from_str(&authority).map_err(|_| {
        ProxyError::new(
            ErrorKind::InvalidRequest,
            "the destination cannot be named in a CONNECT request".into(),
        )
    })?;
    req.headers_mut().insert(HOST, host_value);
    if let Some(mut auth) = auth {
        auth.set_sensitive(true);
        req.headers_mut().insert(PROXY_AUTHORIZATION, auth);
    }
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(MAX_CONNECT_ANSWER)
        .handshake::<_, Empty<Bytes>>(io)
        .await
        .map_err(closed)?;
    let mut conn = std::pin::pin!(conn.with_upgrades());
    let mut answer = std::pin::pin!(sender.send_request(req));
    // The connection must be driven while the answer comes; it may finish first (it
    // hands itself to the upgrade as soon as the answer is read).
    let mut finished = None;
    let resp = loop {
        tokio::select! {
            resp = &mut answer => break resp.map_err(closed)?,
            done = &mut conn, if finished.is_none() => finished = Some(done),
        }
    };
    let status = resp.status();
    if !status.is_success() {
        return Err(ProxyError::refused(proxy, status, credentials));
    }
    if let Some(Err(e)) = finished {
        return Err(closed(e));
    }
    let upgrade = hyper::upgrade::on(resp);
    let upgraded = if finished.is_some() {
        upgrade.await
    } else {
        let (done, upgraded) = tokio::join!(conn, upgrade);
        done.map_err(closed)?;
        upgraded
    };
    upgraded.map_err(closed)
}

/// Why a connection through a proxy failed; the client turns it into a
/// [`TransportError`](crate::TransportError) of the same kind, with the proxy's status.
/// Messages name the proxy by its origin, never its credentials.
#[derive(Debug)]
pub(crate) struct ProxyError {
    pub(crate) kind: ErrorKind,
    /// The status the proxy refused with.
    pub(crate) status: Option<StatusCode>,
    message: String,
}

impl ProxyError {
    fn new(kind: ErrorKind, message: String) -> Self {
        Self {
            kind,
            status: None,
            message,
        }
    }

    fn unusable(reason: &str) -> Self {
        Self::new(
            ErrorKind::InvalidRequest,
            format!("the proxy setting cannot be used: {reason}; nothing was sent"),
        )
    }

    fn reaching(proxy: &Uri, cause: &(dyn StdError + 'static)) -> Self {
        let (kind, what) = if find_source::<rustls::Error>(cause).is_some() {
            (ErrorKind::Tls, "the TLS handshake with the proxy")
        } else {
            (ErrorKind::Connect, "connecting to the proxy")
        };
        Self::new(
            kind,
            format!("{what} {} failed: {}", origin(proxy), chain(cause)),
        )
    }

    fn closed(proxy: &Uri, cause: &hyper::Error) -> Self {
        Self::new(
            ErrorKind::Connect,
            format!(
                "the proxy {} did not open a tunnel: {}",
                origin(proxy),
                chain(cause)
            ),
        )
    }

    fn timeout(proxy: &Uri, after: Duration) -> Self {
        Self::new(
            ErrorKind::Timeout,
            format!(
                "the proxy {} did not open a connection within {} ms",
                origin(proxy),
                after.as_millis()
            ),
        )
    }

    /// The proxy answered `CONNECT`, or a request it was to forward, with `status`;
    /// `credentials`: whether the proxy URL held any.
    pub(crate) fn refused(proxy: &Uri, status: StatusCode, credentials: bool) -> Self {
        let hint = match (status, credentials) {
            (StatusCode::PROXY_AUTHENTICATION_REQUIRED, true) => {
                " (it did not accept the credentials in the proxy URL)"
            }
            (StatusCode::PROXY_AUTHENTICATION_REQUIRED, false) => {
                " (it wants credentials: http://user:password@host:port)"
            }
            _ => "",
        };
        Self {
            kind: ErrorKind::Connect,
            status: Some(status),
            message: format!(
                "the proxy {} refused the connection: {status}{hint}",
                origin(proxy)
            ),
        }
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for ProxyError {}

/// An error and its causes, joined with `: `.
fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cur = inner.source();
    }
    text
}

/// A connection to a destination: direct, to a forwarding proxy, or a tunnel.
pub(crate) enum ProxyStream {
    /// TCP to the destination.
    Direct(TokioIo<TcpStream>),
    /// To a proxy that forwards `http` requests sent in absolute form (boxed: a TLS
    /// session to an `https://` proxy is large, and most connections are direct).
    Forward(Box<MaybeHttpsStream<TokioIo<TcpStream>>>),
    /// A `CONNECT` tunnel through a proxy to the destination.
    Tunnel(Upgraded),
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        match self {
            Self::Direct(io) => io.connected(),
            Self::Forward(io) => io.connected().proxy(true),
            Self::Tunnel(_) => Connected::new(),
        }
    }
}

impl Read for ProxyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Direct(io) => Pin::new(io).poll_read(cx, buf),
            Self::Forward(io) => Pin::new(&mut **io).poll_read(cx, buf),
            Self::Tunnel(io) => Pin::new(io).poll_read(cx, buf),
        }
    }
}

impl Write for ProxyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Direct(io) => Pin::new(io).poll_write(cx, buf),
            Self::Forward(io) => Pin::new(&mut **io).poll_write(cx, buf),
            Self::Tunnel(io) => Pin::new(io).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Direct(io) => Pin::new(io).poll_flush(cx),
            Self::Forward(io) => Pin::new(&mut **io).poll_flush(cx),
            Self::Tunnel(io) => Pin::new(io).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Direct(io) => Pin::new(io).poll_shutdown(cx),
            Self::Forward(io) => Pin::new(&mut **io).poll_shutdown(cx),
            Self::Tunnel(io) => Pin::new(io).poll_shutdown(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Direct(io) => io.is_write_vectored(),
            Self::Forward(io) => io.is_write_vectored(),
            Self::Tunnel(io) => io.is_write_vectored(),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Direct(io) => Pin::new(io).poll_write_vectored(cx, bufs),
            Self::Forward(io) => Pin::new(&mut **io).poll_write_vectored(cx, bufs),
            Self::Tunnel(io) => Pin::new(io).poll_write_vectored(cx, bufs),
        }
    }
}
