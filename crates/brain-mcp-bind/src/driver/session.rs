//! Opening a handshake-era session over a link, and the one guard that ends what an
//! exchange leaves behind, whatever ends it (success, error, timeout, cancel, drop).

use brain_mcp_proto::client::handshake;
use brain_mcp_proto::client::{Call, Framing, Identity, Outgoing};
use brain_mcp_proto::jsonrpc::RequestId;
use tracing::Instrument;

use super::error::{Cause, DriverError, Step};
use super::opening::Opening;
use crate::client::McpClient;
use std::time::Instant;

use crate::link::{Ended, Link};
use crate::observe::{self, Operation};

/// Where an exchange runs: the link, the framing its requests carry, and the guard that
/// cleans up after it.
#[derive(Debug)]
pub(crate) struct Channel {
    pub(crate) link: Link,
    pub(crate) framing: Framing,
    pub(crate) cleanup: Cleanup,
}

impl Channel {
    /// The link and framing, and when the session opened, with nothing left to clean up:
    /// the caller takes the session over (a pooled child keeps its session until a call
    /// takes it).
    pub(crate) fn into_parts(self) -> (Link, Framing, Option<Instant>) {
        let Self {
            link,
            framing,
            mut cleanup,
        } = self;
        cleanup.in_flight = None;
        cleanup.ends_session = false;
        (link, framing, cleanup.opened)
    }

    /// A channel with nothing to end (a 2026-era server: no session).
    pub(crate) fn sessionless(client: &McpClient, link: Link, framing: Framing) -> Self {
        let cleanup = Cleanup::new(client, link.clone(), framing.clone(), false);
        Self {
            link,
            framing,
            cleanup,
        }
    }
}

/// Ends what an exchange leaves behind when dropped, off the caller's path: the core's
/// cancel for a request still in flight, then the end of the session (its `DELETE`, or
/// the child that is the session), each bounded, in a task the client tracks.
#[derive(Debug)]
pub(crate) struct Cleanup {
    client: McpClient,
    link: Link,
    framing: Framing,
    /// The request to cancel if the exchange ends before it is answered.
    pub(crate) in_flight: Option<RequestId>,
    /// The `tasks/cancel` of a task still running, sent if the exchange ends first.
    pub(crate) task: Option<Outgoing>,
    /// Whether the session is the exchange's to end.
    ends_session: bool,
    /// When the session opened (`initialize` answered), for its duration.
    pub(crate) opened: Option<Instant>,
}

impl Cleanup {
    pub(crate) fn new(
        client: &McpClient,
        link: Link,
        framing: Framing,
        ends_session: bool,
    ) -> Self {
        Self {
            client: client.clone(),
            link,
            framing,
            in_flight: None,
            task: None,
            ends_session,
            opened: None,
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let carrier = self.link.carrier();
        let cancel = self
            .in_flight
            .take()
            .and_then(|id| Call::cancel_of(&self.framing, carrier, id));
        let task = self.task.take();
        if cancel.is_none() && task.is_none() && !self.ends_session {
            return;
        }
        let link = self.link.clone();
        let framing = self.framing.clone();
        let ends_session = self.ends_session;
        let opened = self.opened;
        // The cleanup's events belong to the call (or discovery) that opened the session.
        let parent = tracing::Span::current();
        // The exchanges are boxed where they run: the spawned future stays small, so
        // spawning it copies a few hundred bytes, not the exchanges' 4 KB, at each move.
        let work = async move {
            if let Some(cancel) = task {
                // Sent like a notification (bounded, its answer unread): nothing in the
                // answer matters once the call is over.
                observe::task_cancel_sent();
                let op = Operation::start(link.peer(), &framing, &cancel, None, || link.secrets());
                Box::pin(link.notify(cancel)).instrument(op.span()).await;
                op.end(None, || link.secrets());
            }
            if let Some(cancel) = cancel {
                observe::cancel_sent();
                let op = Operation::start(link.peer(), &framing, &cancel, None, || link.secrets());
                Box::pin(link.notify(cancel)).instrument(op.span()).await;
                op.end(None, || link.secrets());
            }
            if ends_session {
                let failed = match Box::pin(link.end(&framing)).await {
                    Ended::Closed => None,
                    Ended::Failed(status) => Some(status),
                };
                if let Some(opened) = opened {
                    observe::session_duration(link.peer(), &framing, opened, failed);
                }
            }
        };
        self.client.spawn_cleanup(work.instrument(parent));
    }
}

/// Opens a handshake-era session over `link` as `identity` (its capabilities are declared
/// once, in `initialize`): `initialize`, then `notifications/initialized`. The channel's
/// guard ends the session when dropped, including when this fails after the server
/// created one.
pub(crate) async fn open_session(
    client: &McpClient,
    link: Link,
    identity: &Identity,
) -> Result<Channel, DriverError> {
    let out = handshake::initialize(client.next_id(), identity);
    // Dropped unanswered, it reads the answer in the background and ends the session.
    let (result, session_id) = Opening::new(client, &link, out).await?;
    // From here the server may hold a session: the guard ends it whatever happens next.
    if let Some(id) = &session_id {
        client.sessions().opened();
        observe::session_opened(&link.secrets(), id);
    }
    let pending = handshake::pending(session_id.clone());
    let mut cleanup = Cleanup::new(client, link.clone(), pending, true);
    cleanup.opened = Some(Instant::now());
    let framing = handshake::negotiated(&result, session_id)
        .map_err(|e| DriverError::new(Step::Handshake, Cause::Core(e.into())))?;
    cleanup.framing = framing.clone();
    let out = handshake::initialized(&framing);
    let op = Operation::start(link.peer(), &framing, &out, None, || link.secrets());
    let sent = link
        .send(out)
        .instrument(op.span())
        .await
        .map_err(|e| DriverError::new(Step::Handshake, Cause::Link(e)));
    op.end(sent.as_ref().err().map(DriverError::failure), || {
        link.secrets()
    });
    sent?;
    Ok(Channel {
        link,
        framing,
        cleanup,
    })
}
