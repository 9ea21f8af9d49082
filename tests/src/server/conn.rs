//! Accepting TCP connections and serving HTTP/1.1 on each, closing idle ones on request;
//! or, with TLS configured, HTTPS with HTTP/1.1 or h2 as ALPN chose.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::body::{Inflight, InflightGuard};
use super::router;
use super::state::Shared;

/// Accepts connections until `shutdown` fires.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        let _open = shared.stats.connection();
                        match shared.config.tls.clone() {
                            Some(tls) => serve_tls(stream, shared.clone(), tls).await,
                            None => serve_conn(stream, shared.clone()).await,
                        }
                    });
                }
                // Out of descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

async fn serve_conn(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let inflight = Arc::new(Inflight::default());
    let last_active = Arc::new(std::sync::Mutex::new(Instant::now()));
    let idle_after = shared.config.close_idle_after;
    let service = {
        let inflight = inflight.clone();
        let last_active = last_active.clone();
        service_fn(move |req| {
            let shared = shared.clone();
            let guard = InflightGuard::new(inflight.clone());
            let last_active = last_active.clone();
            async move {
                let resp = router::handle(req, shared).await;
                touch(&last_active);
                Ok::<_, Infallible>(resp.map(|b| b.with_guard(guard)))
            }
        })
    };
    let conn = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let Some(idle_after) = idle_after else {
        let _ = conn.await;
        return;
    };
    let tick = (idle_after / 4).max(Duration::from_millis(5));
    let mut closing = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = tokio::time::sleep(tick), if !closing => {
                let idle_for = last_active
                    .lock()
                    .map_or(Duration::ZERO, |t| t.elapsed());
                if inflight.busy() {
                    touch(&last_active);
                } else if idle_for >= idle_after {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// HTTPS: the TLS handshake, then HTTP/1.1 or h2 as ALPN chose.
async fn serve_tls(stream: TcpStream, shared: Arc<Shared>, tls: Arc<rustls::ServerConfig>) {
    let _ = stream.set_nodelay(true);
    let Ok(stream) = tokio_rustls::TlsAcceptor::from(tls).accept(stream).await else {
        return;
    };
    let service = service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(router::handle(req, shared).await) }
    });
    let _ = auto::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn touch(last_active: &std::sync::Mutex<Instant>) {
    if let Ok(mut t) = last_active.lock() {
        *t = Instant::now();
    }
}
