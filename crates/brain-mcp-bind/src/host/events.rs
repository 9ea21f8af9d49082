//! A running call as the caller holds it: its live progress, its result, its cancel.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use brain_tools_core::{ProgressEvent, ProgressSink, ToolEvent, ToolResultEvent};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

/// Progress events a call queues for a slow consumer by default; past that, new ones are
/// dropped and counted.
pub const DEFAULT_PROGRESS_BUFFER: usize = 64;

/// A [`ProgressSink`] that never blocks the call and never grows: events go into a
/// bounded channel, and when the consumer is behind, new events are dropped and counted
/// ([`Self::dropped`]). Progress is a hint (every event carries the whole state so far),
/// so losing some of them loses nothing the next one does not say.
#[derive(Clone, Debug)]
pub struct ChannelSink {
    tx: mpsc::Sender<ProgressEvent>,
    dropped: Arc<AtomicU64>,
}

impl ChannelSink {
    /// A sink and the receiver of its events, holding at most `capacity` (at least 1)
    /// events the consumer has not read.
    pub fn new(capacity: usize) -> (Self, mpsc::Receiver<ProgressEvent>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Self {
                tx,
                dropped: Arc::new(AtomicU64::new(0)),
            },
            rx,
        )
    }

    /// How many events were dropped because the consumer was behind (or gone).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl ProgressSink for ChannelSink {
    fn progress(&self, event: ProgressEvent) {
        if self.tx.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One call started by [`ToolHost::call`](super::ToolHost::call): its progress events,
/// then its one result. Dropping it cancels the call (as [`Self::cancel`] does); the
/// result then says `cancelled`, and cleanup (cancel notices, closing sessions and
/// per-call children) goes on in the background.
#[derive(Debug)]
pub struct CallHandle {
    call_id: String,
    progress: mpsc::Receiver<ProgressEvent>,
    result: Option<oneshot::Receiver<ToolResultEvent>>,
    dropped: Arc<AtomicU64>,
    cancel: CancellationToken,
    _guard: DropGuard,
}

impl CallHandle {
    pub(crate) fn new(
        call_id: String,
        sink: &ChannelSink,
        progress: mpsc::Receiver<ProgressEvent>,
        result: oneshot::Receiver<ToolResultEvent>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            call_id,
            progress,
            result: Some(result),
            dropped: sink.dropped.clone(),
            _guard: cancel.clone().drop_guard(),
            cancel,
        }
    }

    /// The call's id (its events carry it).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The next event: `tool.progress` while the call runs, then its `tool.result`, then
    /// `None`.
    pub async fn next(&mut self) -> Option<ToolEvent> {
        if let Some(event) = self.progress.recv().await {
            return Some(ToolEvent::Progress(event));
        }
        // The progress channel closes when the call is over; the result follows.
        let result = self.result.take()?;
        result.await.ok().map(ToolEvent::Result)
    }

    /// Waits for the result, skipping progress events not read yet.
    ///
    /// `CallHandle` is also a [`Stream`](futures_util::Stream) of the same events.
    pub async fn result(mut self) -> ToolResultEvent {
        let call_id = self.call_id.clone();
        let Some(result) = self.result.take() else {
            return lost(&call_id);
        };
        self.progress.close();
        result.await.unwrap_or_else(|_| lost(&call_id))
    }

    /// Cancels the call: it ends at once with `cancelled` (`unknown_outcome` true if the
    /// tool may have been invoked).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The call's cancellation token, to cancel it from elsewhere.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Progress events dropped because they were not read fast enough.
    pub fn dropped_progress(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The result of a call whose task ended without one (the runtime shut down under it).
fn lost(call_id: &str) -> ToolResultEvent {
    ToolResultEvent::failure(
        call_id,
        brain_tools_core::ErrorKind::Cancelled,
        "the call was stopped before it had a result (the runtime is shutting down)",
        true,
    )
}

impl futures_util::Stream for CallHandle {
    type Item = ToolEvent;

    /// The events of [`CallHandle::next`], as a stream: progress, then the result.
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ToolEvent>> {
        use std::task::Poll;
        // The progress channel closes when the call is over; the result follows.
        match self.progress.poll_recv(cx) {
            Poll::Ready(Some(event)) => return Poll::Ready(Some(ToolEvent::Progress(event))),
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {}
        }
        let Some(result) = self.result.as_mut() else {
            return Poll::Ready(None);
        };
        match std::pin::Pin::new(result).poll(cx) {
            Poll::Ready(outcome) => {
                self.result = None;
                Poll::Ready(outcome.ok().map(ToolEvent::Result))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: u64) -> ProgressEvent {
        serde_json::from_value(serde_json::json!({"call_id": "c", "progress": n}))
            .expect("an event")
    }

    #[test]
    fn a_full_channel_drops_and_counts_instead_of_blocking() {
        let (sink, mut rx) = ChannelSink::new(2);
        for n in 1..=5 {
            sink.progress(event(n));
        }
        assert_eq!(sink.dropped(), 3);
        assert_eq!(
            rx.try_recv()
                .map(|e| e.progress.to_string())
                .ok()
                .as_deref(),
            Some("1")
        );
        assert_eq!(
            rx.try_recv()
                .map(|e| e.progress.to_string())
                .ok()
                .as_deref(),
            Some("2")
        );
        assert!(rx.try_recv().is_err(), "the rest were dropped");
        // Room again: delivered.
        sink.progress(event(6));
        assert_eq!(
            rx.try_recv()
                .map(|e| e.progress.to_string())
                .ok()
                .as_deref(),
            Some("6")
        );
        // A consumer that is gone counts as behind.
        drop(rx);
        sink.progress(event(7));
        assert_eq!(sink.dropped(), 4);
    }

    #[tokio::test]
    async fn a_handle_yields_progress_then_the_result_and_cancels_when_dropped() {
        let (sink, progress) = ChannelSink::new(8);
        let (tx, rx) = oneshot::channel();
        let cancel = CancellationToken::new();
        let mut handle = CallHandle::new("c".into(), &sink, progress, rx, cancel.clone());
        sink.progress(event(1));
        drop(sink);
        let _ = tx.send(ToolResultEvent::success("c", Vec::new(), None));
        assert!(matches!(handle.next().await, Some(ToolEvent::Progress(_))));
        assert!(matches!(handle.next().await, Some(ToolEvent::Result(_))));
        assert!(handle.next().await.is_none());
        assert!(!cancel.is_cancelled());
        drop(handle);
        assert!(
            cancel.is_cancelled(),
            "dropping the handle cancels the call"
        );
    }
}
