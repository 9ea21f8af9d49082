//! Handshake-era children kept started and initialized ahead of calls, so a call does
//! not wait for a spawn and `initialize`. Each child serves one call (a session is a
//! process, and sessions never cross calls or tenants) and is closed after it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use brain_mcp_proto::client::Framing;
use tokio::time::Instant;

use super::{START_TIMEOUT, StdioServer, lock};
use crate::client::McpClient;
use crate::driver::{self, Cause, Channel, Cleanup, DriverError, StartFailure, Step};
use crate::link::Link;
use crate::observe;
use brain_mcp_transport::stdio::{CLOSE_GRACE, ChildLink};

/// A child whose session is open: `initialize` answered, `notifications/initialized`
/// sent. Dropped, it is killed.
#[derive(Debug)]
pub(super) struct Ready {
    pub(super) child: Arc<ChildLink>,
    framing: Framing,
    /// When its session opened.
    opened: Option<std::time::Instant>,
}

impl Ready {
    /// The channel of the call it serves: the child is closed when the call ends (and
    /// its session's end is the channel's to note).
    pub(super) fn into_channel(mut self, client: &McpClient) -> Channel {
        let link = Link::Child(self.child.clone());
        let mut cleanup = Cleanup::new(client, link.clone(), self.framing.clone(), true);
        cleanup.opened = self.opened.take();
        Channel {
            link,
            framing: self.framing.clone(),
            cleanup,
        }
    }
}

impl Drop for Ready {
    /// A child that never served a call (the pool shut down, or it was dropped): its
    /// session ends with it.
    fn drop(&mut self) {
        if let Some(opened) = self.opened.take() {
            observe::session_duration(&observe::PIPE, &self.framing, opened, None);
        }
    }
}

impl StdioServer {
    /// A ready child for one call: from the pool, or started now when the pool is empty
    /// (or off). The pool is topped up in the background either way. With `bounded`,
    /// a start that passes `deadline` fails; without, the caller's own deadline ends it
    /// (a call's pipeline reports `timeout`).
    pub(super) async fn take(
        &self,
        deadline: Instant,
        bounded: bool,
    ) -> Result<Ready, DriverError> {
        let found = loop {
            let Some(ready) = lock(&self.inner.pool).pop_front() else {
                break None;
            };
            if !ready.child.is_closed() {
                break Some(ready);
            }
        };
        self.refill();
        match found {
            Some(ready) => Ok(ready),
            None => self.open(deadline, bounded).await,
        }
    }

    /// Starts a child and opens its session, within `deadline` when `bounded`.
    async fn open(&self, deadline: Instant, bounded: bool) -> Result<Ready, DriverError> {
        let start = |failure| DriverError::new(Step::Handshake, Cause::Start(failure));
        let child = self
            .start(true, deadline)
            .await
            .map_err(|why| start(StartFailure::NotStarted(why)))?;
        // Its start, for health: a child started after a backoff that fails lengthens it.
        let started = Instant::now();
        let inner = &self.inner;
        let opening =
            driver::open_session(&inner.client, Link::Child(child.clone()), &inner.identity);
        let opened = if bounded {
            tokio::time::timeout_at(deadline, opening).await
        } else {
            Ok(opening.await)
        };
        match opened {
            Ok(Ok(channel)) => {
                let (_, framing, opened) = channel.into_parts();
                Ok(Ready {
                    child,
                    framing,
                    opened,
                })
            }
            // The child ended: the reader counts that as a crash.
            Ok(Err(e)) if matches!(e.cause, Cause::Link(_)) => Err(start(StartFailure::Ended {
                during: Box::new(e),
                stderr: self.stderr_hint(),
            })),
            // The child is dropped (killed) with these: count them here, since its end is
            // ours, not a crash the reader would report.
            Ok(Err(e)) => {
                self.failed(started);
                Err(start(StartFailure::Handshake(Box::new(e))))
            }
            Err(_) => {
                self.failed(started);
                Err(start(StartFailure::Silent {
                    stderr: self.stderr_hint(),
                }))
            }
        }
    }

    /// Starts children in the background until the pool holds `pool_size` (ready or
    /// starting). A failed start is retried after the crash backoff.
    pub(super) fn refill(&self) {
        let inner = &self.inner;
        if inner.stopped.is_cancelled() || inner.pool_size == 0 {
            return;
        }
        loop {
            let have = lock(&inner.pool).len() + inner.starting.load(Ordering::SeqCst);
            if have >= inner.pool_size {
                return;
            }
            inner.starting.fetch_add(1, Ordering::SeqCst);
            let server = self.clone();
            let stopped = inner.stopped.clone();
            inner.tasks.spawn(async move {
                let open = async {
                    // After crashes, wait the backoff here rather than fail the start.
                    server.backoff().await;
                    server.open(Instant::now() + START_TIMEOUT, true).await
                };
                let opened = tokio::select! {
                    opened = open => Some(opened),
                    () = stopped.cancelled() => None,
                };
                server.inner.starting.fetch_sub(1, Ordering::SeqCst);
                match opened {
                    Some(Ok(ready)) if !server.inner.stopped.is_cancelled() => {
                        lock(&server.inner.pool).push_back(ready);
                    }
                    Some(Ok(ready)) => ready.child.close_within(CLOSE_GRACE).await,
                    // Counted where it failed; the next attempt waits the backoff.
                    Some(Err(_)) => server.refill(),
                    None => {}
                }
            });
        }
    }
}
