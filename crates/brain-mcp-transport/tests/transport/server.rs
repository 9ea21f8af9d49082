//! A real in-process hyper server on 127.0.0.1:0 with fault injection.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub version: http::Version,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Its position on that connection (1-based).
    pub nth_on_conn: usize,
}

/// What the handler wants done.
pub enum Reply {
    Respond(Response<TestBody>),
    /// Read the request, then close the connection without answering.
    Close,
}

pub type Handler = Arc<dyn Fn(Seen) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Seen) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Reply> + Send + 'static,
{
    Arc::new(move |seen| Box::pin(f(seen)))
}

/// A response body fed from a channel: `Err` aborts the connection, an idle sender
/// stalls the body.
pub struct TestBody {
    rx: Option<mpsc::Receiver<Result<Bytes, io::Error>>>,
    full: Option<Bytes>,
}

impl TestBody {
    pub fn full(b: impl Into<Bytes>) -> Self {
        Self {
            rx: None,
            full: Some(b.into()),
        }
    }
    pub fn empty() -> Self {
        Self::full(Bytes::new())
    }
    pub fn channel() -> (mpsc::Sender<Result<Bytes, io::Error>>, Self) {
        let (tx, rx) = mpsc::channel(16);
        (
            tx,
            Self {
                rx: Some(rx),
                full: None,
            },
        )
    }
}

impl Body for TestBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Some(b) = self.full.take() {
            return Poll::Ready((!b.is_empty()).then(|| Ok(Frame::data(b))));
        }
        match self.rx.as_mut() {
            Some(rx) => rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rx.is_none() && self.full.as_ref().is_none_or(Bytes::is_empty)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match (&self.rx, &self.full) {
            (None, Some(b)) => hyper::body::SizeHint::with_exact(b.len() as u64),
            (None, None) => hyper::body::SizeHint::with_exact(0),
            _ => hyper::body::SizeHint::default(),
        }
    }
}

#[derive(Default)]
pub struct Stats {
    pub accepted: AtomicUsize,
    pub closed: AtomicUsize,
    pub seen: Mutex<Vec<Seen>>,
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
    kill: watch::Sender<u64>,
}

impl TestServer {
    pub async fn start(handler: Handler) -> Self {
        Self::start_with(handler, None).await
    }

    /// With `tls`, connections are wrapped in TLS and h2 is served when ALPN picks it.
    pub async fn start_with(handler: Handler, tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let stats = Arc::new(Stats::default());
        let (kill, kill_rx) = watch::channel(0u64);
        let st = stats.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                st.accepted.fetch_add(1, Ordering::SeqCst);
                let st = st.clone();
                let handler = handler.clone();
                let tls = tls.clone();
                let mut kill_rx = kill_rx.clone();
                kill_rx.mark_unchanged();
                tokio::spawn(async move {
                    let st2 = st.clone();
                    let count = Arc::new(AtomicUsize::new(0));
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let handler = handler.clone();
                        let st = st.clone();
                        let count = count.clone();
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|c| c.to_bytes())
                                .unwrap_or_default();
                            let seen = Seen {
                                method: parts.method,
                                version: parts.version,
                                path: parts
                                    .uri
                                    .path_and_query()
                                    .map(|p| p.as_str().to_owned())
                                    .unwrap_or_default(),
                                headers: parts.headers,
                                body,
                                nth_on_conn: count.fetch_add(1, Ordering::SeqCst) + 1,
                            };
                            st.seen.lock().expect("lock").push(seen.clone());
                            match handler(seen).await {
                                Reply::Respond(r) => Ok::<_, io::Error>(r),
                                Reply::Close => Err(io::Error::other("injected close")),
                            }
                        }
                    });
                    let serve = async move {
                        match tls {
                            None => {
                                let _ = hyper::server::conn::http1::Builder::new()
                                    .serve_connection(TokioIo::new(tcp), svc)
                                    .await;
                            }
                            Some(acc) => {
                                let Ok(stream) = acc.accept(tcp).await else {
                                    return;
                                };
                                let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                                if h2 {
                                    let _ = hyper::server::conn::http2::Builder::new(
                                        TokioExecutor::new(),
                                    )
                                    .serve_connection(TokioIo::new(stream), svc)
                                    .await;
                                } else {
                                    let _ = hyper::server::conn::http1::Builder::new()
                                        .serve_connection(TokioIo::new(stream), svc)
                                        .await;
                                }
                            }
                        }
                    };
                    tokio::select! {
                        () = serve => {}
                        _ = kill_rx.changed() => {}
                    }
                    st2.closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Self { addr, stats, kill }
    }

    pub fn url(&self, path: &str) -> http::Uri {
        format!("http://{}{path}", self.addr).parse().expect("url")
    }

    pub fn accepted(&self) -> usize {
        self.stats.accepted.load(Ordering::SeqCst)
    }

    pub fn closed(&self) -> usize {
        self.stats.closed.load(Ordering::SeqCst)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.stats.seen.lock().expect("lock").clone()
    }

    /// Drops every open connection at once (as a server closing idle keep-alives).
    pub fn kill_connections(&self) {
        self.kill.send_modify(|n| *n += 1);
    }

    /// Waits until `closed()` reaches `n` (or panics after 5 s).
    pub async fn wait_closed(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while self.closed() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "server saw {} closed connections, wanted {n}",
                self.closed()
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

pub fn json(status: StatusCode, body: impl Into<Bytes>) -> Reply {
    Reply::Respond(
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(TestBody::full(body))
            .expect("response"),
    )
}

pub fn sse(body: impl Into<Bytes>) -> Reply {
    Reply::Respond(
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(TestBody::full(body))
            .expect("response"),
    )
}

pub fn status(status: StatusCode) -> Reply {
    Reply::Respond(
        Response::builder()
            .status(status)
            .body(TestBody::empty())
            .expect("response"),
    )
}
