//! A response body that holds its request's [`Lease`]: whoever reads the body holds
//! the connection, and reading it to its end is what lets the connection serve the next
//! request before hyper's task says it is ready ([`Lease::read`]). The mark is made
//! here, where the last frame is seen, so no reader can forget it.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::Lease;

/// A response body and the lease on its connection (none for a connection outside the
/// pool). Dropped, it drops the body, then gives the lease back.
#[derive(Debug)]
pub(crate) struct Reply {
    body: Incoming,
    pub(super) lease: Option<Lease>,
    /// A frame failed: the end that hyper reports after an error is no clean end.
    failed: bool,
}

impl Reply {
    /// `body`, keeping `lease` until it is dropped.
    pub(crate) fn new(body: Incoming, lease: Option<Lease>) -> Self {
        Self {
            body,
            lease,
            failed: false,
        }
    }

    /// Whether the body has nothing left to send; when so, its connection is marked as
    /// read to the end, as if its last frame had been polled.
    pub(crate) fn ended(&mut self) -> bool {
        let ended = self.body.is_end_stream();
        if ended {
            self.mark_read();
        }
        ended
    }

    fn mark_read(&mut self) {
        if self.failed {
            return;
        }
        if let Some(lease) = self.lease.as_mut() {
            lease.read();
        }
    }
}

impl Body for Reply {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.body).poll_frame(cx));
        match &frame {
            None => this.mark_read(),
            Some(Err(_)) => this.failed = true,
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
