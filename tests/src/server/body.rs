//! The response body type: a whole buffer, or a channel fed by a task (SSE, lazy faults).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;

/// What a body channel carries: data, or an error that makes hyper abort the connection.
pub(crate) type Chunk = Result<Bytes, io::Error>;

/// Counts requests in flight on one connection, so idle connections can be told apart.
#[derive(Debug, Default)]
pub(crate) struct Inflight(AtomicUsize);

impl Inflight {
    pub(crate) fn busy(&self) -> bool {
        self.0.load(Ordering::SeqCst) > 0
    }
}

/// Held from the moment a request arrives until its response body is done or dropped.
#[derive(Debug)]
pub(crate) struct InflightGuard(Arc<Inflight>);

impl InflightGuard {
    pub(crate) fn new(counter: Arc<Inflight>) -> Self {
        counter.0.fetch_add(1, Ordering::SeqCst);
        Self(counter)
    }
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Debug)]
enum Kind {
    Full(Option<Bytes>),
    Channel(mpsc::Receiver<Chunk>),
}

/// A response body.
#[derive(Debug)]
pub(crate) struct Body {
    kind: Kind,
    guard: Option<InflightGuard>,
}

impl Body {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes: Bytes = bytes.into();
        Self {
            kind: Kind::Full((!bytes.is_empty()).then_some(bytes)),
            guard: None,
        }
    }

    pub(crate) fn empty() -> Self {
        Self::full(Bytes::new())
    }

    /// A body fed through the returned sender; it ends when the sender is dropped.
    pub(crate) fn channel() -> (mpsc::Sender<Chunk>, Self) {
        let (tx, rx) = mpsc::channel(4);
        let body = Self {
            kind: Kind::Channel(rx),
            guard: None,
        };
        (tx, body)
    }

    pub(crate) fn with_guard(mut self, guard: InflightGuard) -> Self {
        self.guard = Some(guard);
        self
    }

    fn finish(&mut self) {
        self.guard = None;
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        let next = match &mut this.kind {
            Kind::Full(bytes) => bytes.take().map(Ok),
            Kind::Channel(rx) => match rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(next) => next,
            },
        };
        if next.is_none() {
            this.finish();
        }
        Poll::Ready(next.map(|chunk| chunk.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Channel(_) => SizeHint::default(),
        }
    }
}
