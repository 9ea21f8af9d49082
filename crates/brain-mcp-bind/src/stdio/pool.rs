//! Handshake-era children kept started and initialized ahead of calls, so a call does
//! not wait for a spawn and `initialize`. Each child serves one call (a session is a
//! process, and sessions never cross calls or tenants) and is closed after it.

use std::sync::atomic::Ordering;

use brain_mcp_proto::client::Framing;
use tokio::time::Instant;

use super::exchange::{self, OpenError};
use super::link::Link;
use super::{START_TIMEOUT, StartError, StdioServer, link_text, lock};

/// A child whose session is open: `initialize` answered, `notifications/initialized`
/// sent.
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) link: Link,
    pub(crate) framing: Framing,
}

impl StdioServer {
    /// A ready child for one call: from the pool, or started now when the pool is empty
    /// (or off). The pool is topped up in the background either way. With `bounded`,
    /// a start that passes `deadline` fails; without, the caller's own deadline ends it
    /// (a call's pipeline reports `timeout`).
    pub(crate) async fn take(&self, deadline: Instant, bounded: bool) -> Result<Ready, StartError> {
        let found = loop {
            let Some(ready) = lock(&self.inner.pool).pop_front() else {
                break None;
            };
            if !ready.link.is_closed() {
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
    async fn open(&self, deadline: Instant, bounded: bool) -> Result<Ready, StartError> {
        let link = self.start(true, deadline).await?;
        let id = self.inner.client.next_id();
        let opening = exchange::open(&link, id, &self.inner.identity);
        let opened = if bounded {
            tokio::time::timeout_at(deadline, opening).await
        } else {
            Ok(opening.await)
        };
        match opened {
            Ok(Ok(framing)) => Ok(Ready { link, framing }),
            Ok(Err(OpenError::Link(e))) => Err(StartError::Handshake(format!(
                "the server ended during initialize: {}{}",
                link_text(&e),
                self.stderr_hint()
            ))),
            // The child is dropped (killed) with these: count them here, since its end
            // is ours, not a crash the reader would report.
            Ok(Err(OpenError::Handshake(m))) => {
                self.failed();
                Err(StartError::Handshake(m))
            }
            Err(_) => {
                self.failed();
                Err(StartError::Handshake(format!(
                    "the server did not answer initialize in time{}",
                    self.stderr_hint()
                )))
            }
        }
    }

    /// Starts children in the background until the pool holds `pool_size` (ready or
    /// starting). A failed start is retried after the crash backoff.
    pub(crate) fn refill(&self) {
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
                    Some(Ok(ready)) => ready.link.shutdown(super::CLOSE_GRACE).await,
                    // Counted where it failed; the next attempt waits the backoff.
                    Some(Err(_)) => server.refill(),
                    None => {}
                }
            });
        }
    }
}
