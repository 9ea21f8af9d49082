//! One connection on hyper's connection API: connect (bounded), the HTTP/1.1 or h2
//! handshake ALPN chose, the task that drives it, and sending one request on it.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::Either;
use http::header::HOST;
use http::{HeaderValue, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{TrySendError, http1, http2};
use hyper::rt::{Read, Write};
use hyper_util::client::legacy::connect::Connection;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tower_service::Service;

use crate::observe::ConnectionUse;

/// The body of every request the transport sends (re-sendable: it is `Bytes`).
pub(crate) type Body = Full<Bytes>;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a request got no response: the connect failed (nothing was sent), or hyper
/// failed the request on its connection, `unsent` when it handed the request back.
#[derive(Debug)]
pub(crate) enum Failure {
    Connect(BoxError),
    Send { error: hyper::Error, unsent: bool },
}

impl Failure {
    /// hyper handed the request back: it was never written.
    pub(crate) fn unsent(&self) -> bool {
        matches!(self, Self::Send { unsent: true, .. })
    }

    fn from_send(mut e: TrySendError<Request<Body>>) -> Self {
        let unsent = e.take_message().is_some();
        Self::Send {
            error: e.into_error(),
            unsent,
        }
    }
}

/// The sending half of one connection.
#[derive(Debug)]
pub(crate) enum Sender {
    H1(http1::SendRequest<Body>),
    H2(http2::SendRequest<Body>),
}

/// What a request needs to know of its connection.
#[derive(Clone, Debug)]
pub(crate) struct Info {
    /// The connection's number (from 1, per client; 0 for a connection of its own).
    pub(crate) id: u64,
    /// An HTTP/1.1 connection to a forwarding proxy: requests go in absolute form.
    pub(crate) proxied: bool,
    /// Handed to every response on it when exchange events were recorded as it opened.
    pub(crate) used: Option<ConnectionUse>,
    /// The `Host` of its HTTP/1.1 requests, written once per connection (what
    /// hyper-util's client wrote per request: `host[:port]`, the default port left out).
    pub(crate) host: Option<HeaderValue>,
    /// It is still counted open (in the pool's counts and, HTTP/1.1, its origin's):
    /// cleared once, by its task's end or the pool dropping its sender, whichever comes
    /// first, so neither counts it closed twice.
    pub(crate) counted: Arc<AtomicBool>,
}

/// Sends `req` on `sender` as HTTP/1.1 or h2 requires: over HTTP/1.1 with a `Host` and
/// the path alone (absolute form to a forwarding proxy); over h2 as it is (`:authority`
/// and `:scheme` come from the URI). The response carries the connection's
/// [`ConnectionUse`] when it has one.
pub(crate) fn send(
    sender: &mut Sender,
    info: &Info,
    mut req: Request<Body>,
) -> impl Future<Output = Result<Response<Incoming>, Failure>> + use<> {
    let sent = match sender {
        Sender::H1(s) => {
            if let Some(host) = &info.host {
                req.headers_mut()
                    .entry(HOST)
                    .or_insert_with(|| host.clone());
            }
            if !info.proxied {
                origin_form(req.uri_mut());
            }
            Either::Left(s.try_send_request(req))
        }
        Sender::H2(s) => Either::Right(s.try_send_request(req)),
    };
    let used = info.used.clone();
    async move {
        let mut resp = sent.await.map_err(Failure::from_send)?;
        if let Some(used) = used {
            resp.extensions_mut().insert(used);
        }
        Ok(resp)
    }
}

/// The request target of an HTTP/1.1 request sent directly: its path and query.
fn origin_form(uri: &mut Uri) {
    let path = match uri.path_and_query() {
        Some(p) if p.as_str() != "/" => {
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = Some(p.clone());
            Uri::from_parts(parts).ok()
        }
        _ => None,
    };
    *uri = path.unwrap_or_else(|| Uri::from_static("/"));
}

/// `host[:port]` of `uri`, the port left out when it is the scheme's default.
pub(crate) fn host_header(uri: &Uri) -> Option<HeaderValue> {
    let host = uri.host()?;
    let default = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let value = match uri.port() {
        Some(port) if port.as_u16() != default => HeaderValue::try_from(format!("{host}:{port}")),
        _ => HeaderValue::from_str(host),
    };
    value.ok()
}

/// A connection just opened: its sender, whether ALPN chose h2, whether it goes to a
/// forwarding proxy, and the future that drives it (to spawn: it ends when the
/// connection closes, whichever side closed it).
pub(crate) struct Opened {
    pub(crate) sender: Sender,
    pub(crate) h2: bool,
    pub(crate) proxied: bool,
    pub(crate) driver: Pin<Box<dyn Future<Output = ()> + Send>>,
}

/// Connects to `uri` with `connector` within `limit` (DNS, TCP, a proxy's `CONNECT`,
/// TLS together) and shakes hands as ALPN chose.
pub(crate) async fn open<C>(mut connector: C, uri: Uri, limit: Duration) -> Result<Opened, Failure>
where
    C: Service<Uri>,
    C::Response: Connection + Read + Write + Unpin + Send + 'static,
    C::Error: Into<BoxError>,
{
    let connecting = async {
        poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(Into::into)?;
        connector.call(uri).await.map_err(Into::into)
    };
    let io = match tokio::time::timeout(limit, connecting).await {
        Ok(io) => io.map_err(Failure::Connect)?,
        Err(_) => {
            let ms = limit.as_millis();
            return Err(Failure::Connect(
                format!("the connect took longer than {ms} ms").into(),
            ));
        }
    };
    let connected = io.connected();
    let (h2, proxied) = (connected.is_negotiated_h2(), connected.is_proxied());
    // The handshake is the connect's last step: its failure is a connect failure.
    let (sender, driver): (_, Pin<Box<dyn Future<Output = ()> + Send>>) = if h2 {
        let (sender, conn) = http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .handshake(io)
            .await
            .map_err(|e| Failure::Connect(e.into()))?;
        (
            Sender::H2(sender),
            Box::pin(async move { drop(conn.await) }),
        )
    } else {
        let (sender, conn) = http1::handshake(io)
            .await
            .map_err(|e| Failure::Connect(e.into()))?;
        (
            Sender::H1(sender),
            Box::pin(async move { drop(conn.await) }),
        )
    };
    Ok(Opened {
        sender,
        h2,
        proxied,
        driver,
    })
}
