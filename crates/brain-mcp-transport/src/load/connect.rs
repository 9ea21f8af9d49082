//! The connector side of the counts: connects that wait until they are needed, and
//! connections counted until they close.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};

use super::{Loads, REQUEST, key};
use crate::observe::{CONNECTIONS_OPENED, ConnectionUse, EXCHANGE_TARGET};

/// A connector that counts the connections `C` opens, per origin, until they close.
#[derive(Clone, Debug)]
pub(crate) struct Counting<C> {
    inner: C,
    loads: Arc<Loads>,
    /// Longest a whole connect may take (DNS, TCP, a proxy's CONNECT, TLS): a connect
    /// under way holds other requests' connects back, so none may hang.
    limit: Duration,
}

impl<C> Counting<C> {
    pub(crate) fn new(inner: C, loads: Arc<Loads>, limit: Duration) -> Self {
        Self {
            inner,
            loads,
            limit,
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower_service::Service<Uri> for Counting<C>
where
    C: tower_service::Service<Uri> + Clone + Send + 'static,
    C::Response: Connection + Send + 'static,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
{
    type Response = Counted<C::Response>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let loads = self.loads.clone();
        let (https, authority) = key(&uri);
        let authority: Box<str> = authority.into();
        let mut inner = self.inner.clone();
        let limit = self.limit;
        let served = REQUEST.try_with(Arc::clone).ok();
        // Asked here, in the task of the request that starts the connect (hyper may finish
        // the connect in a task of its own, outside the request's subscriber).
        let logged = tracing::enabled!(target: EXCHANGE_TARGET, tracing::Level::DEBUG);
        Box::pin(async move {
            if !loads.connect_needed((https, &authority), served).await {
                return Err("no request needed this connection".into());
            }
            let connecting = inner.call(uri);
            // Counted as connecting until this ends, whichever way.
            let started = Connecting {
                loads: &loads,
                https,
                authority: &authority,
                done: false,
            };
            let io = match tokio::time::timeout(limit, connecting).await {
                Ok(io) => io.map_err(Into::into)?,
                Err(_) => {
                    let ms = limit.as_millis();
                    return Err(format!("the connect took longer than {ms} ms").into());
                }
            };
            let h2 = io.connected().is_negotiated_h2();
            let id = started.opened(h2);
            Ok(Counted {
                io,
                used: logged.then(|| ConnectionUse::new(id)),
                _open: OpenGuard {
                    loads,
                    https,
                    authority,
                    h2,
                },
            })
        })
    }
}

/// A connect under way, counted until dropped.
struct Connecting<'a> {
    loads: &'a Loads,
    https: bool,
    authority: &'a str,
    done: bool,
}

impl Connecting<'_> {
    /// The connect succeeded: it now counts as an open connection, in one step so that
    /// no other connect sees a moment with one connection too few. Returns its number.
    fn opened(mut self, h2: bool) -> u64 {
        self.done = true;
        let id = self.loads.opened.fetch_add(1, Ordering::Relaxed) + 1;
        metrics::counter!(CONNECTIONS_OPENED).increment(1);
        self.loads.update((self.https, self.authority), |o| {
            o.connecting = o.connecting.saturating_sub(1);
            if h2 {
                o.h2 += 1;
            } else {
                o.h1 += 1;
            }
        });
        id
    }
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.loads.update((self.https, self.authority), |o| {
                o.connecting = o.connecting.saturating_sub(1);
            });
        }
    }
}

/// A connection counted as open until dropped.
#[derive(Debug)]
pub(crate) struct Counted<T> {
    io: T,
    /// Handed to every response on this connection (new or reused), when the connection
    /// opened while exchange events were recorded.
    used: Option<ConnectionUse>,
    _open: OpenGuard,
}

#[derive(Debug)]
struct OpenGuard {
    loads: Arc<Loads>,
    https: bool,
    authority: Box<str>,
    h2: bool,
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.loads.closed.fetch_add(1, Ordering::Relaxed);
        let h2 = self.h2;
        self.loads.update((self.https, &self.authority), |o| {
            if h2 {
                o.h2 = o.h2.saturating_sub(1);
            } else {
                o.h1 = o.h1.saturating_sub(1);
            }
        });
    }
}

impl<T: Connection> Connection for Counted<T> {
    fn connected(&self) -> Connected {
        let inner = self.io.connected();
        if let Some(used) = &self.used {
            return inner.extra(used.clone());
        }
        // hyper-util copies a connection's extras into each of its responses (a map and a
        // box apiece, about 1k instructions per request): with nobody logging the
        // exchanges, the responses carry none. What hyper itself reads is kept.
        let bare = Connected::new().proxy(inner.is_proxied());
        match inner.is_negotiated_h2() {
            true => bare.negotiated_h2(),
            false => bare,
        }
    }
}

impl<T: Read + Unpin> Read for Counted<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Counted<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}
