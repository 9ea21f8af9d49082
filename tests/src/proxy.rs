//! A small, real HTTP proxy on 127.0.0.1 for tests: `CONNECT` tunnels (spliced to the
//! destination) and forwarding of absolute-form requests, over plain TCP or TLS, with
//! optional credentials and refusals. It records every request it saw ([`ProxySeen`]).
//!
//! Like [`TestServer`](crate::server::TestServer), it runs on a thread and runtime of its
//! own, so it works from plain and async tests alike; dropping it stops it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::header::{AUTHORIZATION, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION};
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::server::StartError;

/// How a [`TestProxy`] behaves.
#[derive(Clone, Default)]
pub struct ProxyOptions {
    /// Require `Proxy-Authorization: Basic` with this user and password; anything else
    /// gets `407`.
    pub credentials: Option<(String, String)>,
    /// Answer every request with this status instead of serving it.
    pub refuse: Option<u16>,
    /// Names the proxy resolves itself (so tests can use names no DNS knows).
    pub hosts: HashMap<String, SocketAddr>,
    /// Serve TLS (an `https://` proxy).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Misbehave: pass the client's `Proxy-Authorization` on to the destination when
    /// forwarding (a proxy that leaks its credentials to the server behind it).
    pub leak_credentials: bool,
}

impl ProxyOptions {
    /// Requires these credentials.
    #[must_use]
    pub fn credentials(mut self, user: &str, password: &str) -> Self {
        self.credentials = Some((user.to_owned(), password.to_owned()));
        self
    }

    /// Passes `Proxy-Authorization` on to the destination (see
    /// [`ProxyOptions::leak_credentials`]).
    #[must_use]
    pub fn leaking_credentials(mut self) -> Self {
        self.leak_credentials = true;
        self
    }

    /// Resolves `name` to `addr` for every request.
    #[must_use]
    pub fn host(mut self, name: &str, addr: SocketAddr) -> Self {
        self.hosts.insert(name.to_ascii_lowercase(), addr);
        self
    }
}

/// One request the proxy received.
#[derive(Clone, Debug)]
pub struct ProxySeen {
    /// `CONNECT` for a tunnel, otherwise the forwarded request's method.
    pub method: Method,
    /// The request target as received: `host:port` for `CONNECT`, an absolute URL when
    /// forwarding.
    pub target: String,
    /// The `Proxy-Authorization` header.
    pub proxy_authorization: Option<String>,
    /// The `Authorization` header (a forwarded request's bearer; a `CONNECT` has none).
    pub authorization: Option<String>,
    /// What the proxy answered: 200 for a tunnel, the destination's status when
    /// forwarding, or its own refusal.
    pub status: u16,
}

struct State {
    options: ProxyOptions,
    expected: Option<String>,
    seen: Mutex<Vec<ProxySeen>>,
}

/// A running proxy; stops when dropped.
pub struct TestProxy {
    addr: SocketAddr,
    tls: bool,
    state: Arc<State>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestProxy")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

type ProxyBody = BoxBody<Bytes, hyper::Error>;

impl TestProxy {
    /// Starts a proxy, panicking when it cannot (for tests; see [`TestProxy::try_start`]).
    #[allow(clippy::expect_used)] // a test helper: a proxy that cannot start fails the test
    pub fn start(options: ProxyOptions) -> Self {
        Self::try_start(options).expect("start the test proxy")
    }

    /// Starts a proxy on 127.0.0.1 at a free port.
    pub fn try_start(options: ProxyOptions) -> Result<Self, StartError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let bind = |source| StartError::Bind { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let addr = listener.local_addr().map_err(bind)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(StartError::Runtime)?;
        let expected = options.credentials.as_ref().map(|(user, password)| {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            format!("Basic {encoded}")
        });
        let tls = options.tls.is_some();
        let state = Arc::new(State {
            options,
            expected,
            seen: Mutex::new(Vec::new()),
        });
        let (shutdown, stop) = oneshot::channel();
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("test-proxy-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = TcpListener::from_std(listener) {
                        serve(listener, thread_state, stop).await;
                    }
                });
            })
            .map_err(StartError::Runtime)?;
        Ok(Self {
            addr,
            tls,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT` (`https` when serving TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// [`Self::url`] with credentials in it.
    pub fn url_with(&self, user: &str, password: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{user}:{password}@{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<ProxySeen> {
        self.state
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, state: Arc<State>, mut shutdown: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_conn(stream, state.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

async fn serve_conn(stream: TcpStream, state: Arc<State>) {
    let _ = stream.set_nodelay(true);
    let tls = state.options.tls.clone();
    let service = service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(handle(req, &state).await) }
    });
    let http = hyper::server::conn::http1::Builder::new();
    match tls {
        Some(tls) => {
            let Ok(stream) = tokio_rustls::TlsAcceptor::from(tls).accept(stream).await else {
                return;
            };
            let _ = http
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        }
        None => {
            let _ = http
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        }
    }
}

fn header(req: &Request<Incoming>, name: http::header::HeaderName) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn status(code: StatusCode) -> Response<ProxyBody> {
    let mut resp = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    *resp.status_mut() = code;
    resp
}

/// Serves one request: refuses it, opens a tunnel, or forwards it.
async fn handle(req: Request<Incoming>, state: &State) -> Response<ProxyBody> {
    let mut seen = ProxySeen {
        method: req.method().clone(),
        target: req.uri().to_string(),
        proxy_authorization: header(&req, PROXY_AUTHORIZATION),
        authorization: header(&req, AUTHORIZATION),
        status: 0,
    };
    let resp = answer(req, state, &seen).await;
    seen.status = resp.status().as_u16();
    state
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(seen);
    resp
}

async fn answer(req: Request<Incoming>, state: &State, seen: &ProxySeen) -> Response<ProxyBody> {
    if let Some(code) = state.options.refuse {
        return status(StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_GATEWAY));
    }
    if let Some(expected) = &state.expected
        && seen.proxy_authorization.as_deref() != Some(expected.as_str())
    {
        let mut resp = status(StatusCode::PROXY_AUTHENTICATION_REQUIRED);
        resp.headers_mut().insert(
            PROXY_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"test\""),
        );
        return resp;
    }
    let Some(authority) = req.uri().authority().cloned() else {
        return status(StatusCode::BAD_REQUEST);
    };
    let default_port = if req.method() == Method::CONNECT {
        443
    } else {
        80
    };
    let port = authority.port_u16().unwrap_or(default_port);
    let Ok(upstream) = connect(state, authority.host(), port).await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    if req.method() == Method::CONNECT {
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                let mut client = TokioIo::new(upgraded);
                let mut upstream = upstream;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
        });
        return status(StatusCode::OK);
    }
    forward(req, upstream, state.options.leak_credentials).await
}

/// Connects to `host:port`, or to where [`ProxyOptions::hosts`] says `host` is.
async fn connect(state: &State, host: &str, port: u16) -> std::io::Result<TcpStream> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let stream = match state.options.hosts.get(&host.to_ascii_lowercase()) {
        Some(addr) => TcpStream::connect(addr).await?,
        None => TcpStream::connect((host, port)).await?,
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Forwards an absolute-form request to `upstream` in origin form, without the proxy's
/// own headers, and streams the answer back.
async fn forward(req: Request<Incoming>, upstream: TcpStream, leak: bool) -> Response<ProxyBody> {
    if req.uri().scheme_str() != Some("http") {
        return status(StatusCode::BAD_REQUEST);
    }
    let Ok((mut sender, conn)) =
        hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(upstream)).await
    else {
        return status(StatusCode::BAD_GATEWAY);
    };
    tokio::spawn(conn);
    let (mut parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", http::uri::PathAndQuery::as_str)
        .to_owned();
    parts.uri = path.parse().unwrap_or_else(|_| Uri::from_static("/"));
    if !leak {
        parts.headers.remove(PROXY_AUTHORIZATION);
    }
    parts.headers.remove("proxy-connection");
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => resp.map(BodyExt::boxed),
        Err(_) => status(StatusCode::BAD_GATEWAY),
    }
}
