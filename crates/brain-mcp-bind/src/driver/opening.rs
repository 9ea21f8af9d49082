//! An `initialize` in flight over HTTP that outlives its call: a server may open a
//! session that only its answer names, so when the call ends first (its deadline, a
//! cancel, the caller dropping it), the answer is still read in the background, within
//! [`CLEANUP_STEP_DEADLINE`], and the session it names is ended with a `DELETE`.
//! Without it, every call abandoned during its handshake left a session on the server.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use brain_mcp_proto::client::{Framing, Outgoing, handshake};
use serde_json::value::RawValue;
use tracing::Instrument;

use super::error::{DriverError, Step};
use super::request::request;
use crate::client::{CLEANUP_STEP_DEADLINE, McpClient};
use crate::link::Link;
use crate::observe;

/// The answer to `initialize`: its result and the session id it came with.
type Answer = Result<(Box<RawValue>, Option<String>), DriverError>;

/// The `initialize` request of [`open_session`](super::open_session), awaited as a
/// future; dropped before its answer, it hands the rest to the client's cleanup tasks.
pub(crate) struct Opening {
    client: McpClient,
    link: Link,
    /// Boxed: it outlives this value when dropped unanswered, and is moved only once.
    work: Option<Pin<Box<dyn Future<Output = Answer> + Send>>>,
}

impl Opening {
    /// Sends `out` (an `initialize`) over `link` when first polled.
    pub(crate) fn new(client: &McpClient, link: &Link, out: Outgoing) -> Self {
        let on = link.clone();
        let work = Box::pin(async move {
            request(&on, &Framing::before_session(), out, Step::Handshake).await
        });
        Self {
            client: client.clone(),
            link: link.clone(),
            work: Some(work),
        }
    }
}

impl Future for Opening {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let Some(work) = self.work.as_mut() else {
            return Poll::Pending;
        };
        let answer = ready!(work.as_mut().poll(cx));
        self.work = None;
        Poll::Ready(answer)
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        let Some(work) = self.work.take() else {
            return;
        };
        // A child's session is the child, which its link ends: nothing to read for.
        if !matches!(self.link, Link::Http(_)) {
            return;
        }
        let link = self.link.clone();
        let client = self.client.clone();
        let parent = tracing::Span::current();
        let finish = async move {
            // On the client's coarse timer, as its other cleanup bounds are.
            let timer = client.http().background_timer();
            let answered = timer.timeout(CLEANUP_STEP_DEADLINE, work).await;
            let Some(Ok((_, Some(id)))) = answered else {
                return;
            };
            client.sessions().opened();
            observe::session_opened(&link.secrets(), &id);
            let framing = handshake::pending(Some(id));
            Box::pin(link.end(&framing)).await;
        };
        self.client.spawn_cleanup(finish.instrument(parent));
    }
}

impl std::fmt::Debug for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opening")
            .field("answered", &self.work.is_none())
            .finish_non_exhaustive()
    }
}
