//! A child process as a link, the stdio counterpart of [`HttpClient::post`]: its stdin
//! shared by the exchanges that write to it, and one task that reads its stdout, each line
//! decoded once, and hands each message to the exchange it belongs to (the client core's
//! [`stdio::route`]: a response by its id, progress by its token). The child is killed
//! when the last handle on it goes.
//!
//! [`HttpClient::post`]: crate::HttpClient::post

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use brain_mcp_proto::client::stdio::{self, Route};
use brain_mcp_proto::client::{Expect, Framing, Outgoing};
use brain_mcp_proto::jsonrpc::RequestId;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{StderrTail, StdioConfig, StdioError, StdioProcess, StdioSender};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::stream::Received;

/// How long a message that expects no reply (an answer to a server request, a cancel)
/// may take to write.
pub const UNANSWERED_DEADLINE: Duration = Duration::from_secs(2);

/// Messages queued for one exchange. On a child that serves one exchange, the reader then
/// waits for it to catch up (the child waits too: backpressure, not memory). On a shared
/// child the reader never waits for one exchange, which would stall every other: past
/// `INBOX_DEPTH - 1` queued messages, progress for that exchange is dropped (the last
/// place is kept for its response or the error that ends it).
const INBOX_DEPTH: usize = 32;

/// Answers to server requests that belong to no exchange (a shared child's pings) being
/// written at once; a request that comes while this many are still waiting to be written
/// (a child that does not read its input) goes unanswered, so a flood of requests costs
/// no task and no memory each.
const ANSWERS_IN_FLIGHT: usize = 16;

/// How long a child closed on purpose gets to exit after its stdin closes.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Called once when the child's output ends: whether we asked for it (`expected`), and
/// its stderr.
pub type OnEnd = Box<dyn FnOnce(bool, StderrTail) + Send>;

/// A running child.
#[derive(Debug)]
pub struct ChildLink {
    shared: Arc<Shared>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    sender: tokio::sync::Mutex<Option<StdioSender>>,
    routes: Mutex<Routes>,
    stderr: StderrTail,
    pid: Option<u32>,
    /// Every exchange gets every server request (a child that serves one call at a
    /// time), rather than answering them as belonging to no one (a shared child).
    exclusive: AtomicBool,
    /// We closed stdin on purpose: the end that follows is no crash.
    closing: AtomicBool,
    next_key: AtomicU64,
    /// Answers to unattributed server requests not yet written (at most
    /// [`ANSWERS_IN_FLIGHT`]).
    answering: AtomicUsize,
    /// The most bytes of a message that is not an exchange's response.
    message_limit: usize,
}

#[derive(Default)]
struct Routes {
    boxes: Vec<Registration>,
    /// Why the output ended, once it has.
    ended: Option<String>,
    /// The framing used to refuse server requests that belong to no exchange.
    framing: Option<Framing>,
}

struct Registration {
    key: u64,
    request: RequestId,
    token: Option<RequestId>,
    tx: mpsc::Sender<Result<Received, TransportError>>,
}

impl ChildLink {
    /// Starts the child. `exclusive`: whether it serves one exchange at a time;
    /// `message_limit`: the most bytes of a message that is not a response; `on_end` is
    /// called once its output ends.
    pub fn spawn(
        config: StdioConfig,
        exclusive: bool,
        message_limit: usize,
        on_end: OnEnd,
    ) -> Result<Arc<Self>, StdioError> {
        let mut process = StdioProcess::spawn(config)?;
        let sender = process.take_sender();
        let shared = Arc::new(Shared {
            sender: tokio::sync::Mutex::new(sender),
            routes: Mutex::new(Routes::default()),
            stderr: process.stderr_handle(),
            pid: process.id(),
            exclusive: AtomicBool::new(exclusive),
            closing: AtomicBool::new(false),
            next_key: AtomicU64::new(1),
            answering: AtomicUsize::new(0),
            message_limit,
        });
        let reader = tokio::spawn(read(process, shared.clone(), on_end));
        Ok(Arc::new(Self {
            shared,
            reader: Mutex::new(Some(reader)),
        }))
    }

    /// Serve many exchanges at once from now on (a 2026-era child); server requests
    /// are answered in `framing` as belonging to no exchange.
    pub fn share(&self, framing: Framing) {
        self.shared.exclusive.store(false, Ordering::SeqCst);
        self.shared.routes().framing = Some(framing);
    }

    /// Whether the child serves many exchanges at once.
    pub fn is_shared(&self) -> bool {
        !self.shared.exclusive.load(Ordering::SeqCst)
    }

    /// Whether the child ending now would be expected (no crash): while it is probed,
    /// a child may quit on purpose.
    pub fn expect_end(&self, expected: bool) {
        self.shared.closing.store(expected, Ordering::SeqCst);
    }

    /// The child's recent stderr.
    pub fn stderr(&self) -> StderrTail {
        self.shared.stderr.clone()
    }

    /// Whether the child's output has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.routes().ended.is_some()
    }

    /// Registers the exchange of request `out` (its response, and the progress for its
    /// token, go to the returned inbox; in an exclusive child, server requests too), then
    /// writes it. Its response may take `budget` bytes.
    pub async fn request(&self, out: Outgoing, budget: usize) -> Result<Inbox, TransportError> {
        let Expect::Response(request) = out.expect.clone() else {
            return Err(TransportError::new(
                ErrorKind::InvalidRequest,
                Delivery::NotSent,
                "a message without an id cannot be answered",
            ));
        };
        let (tx, rx) = mpsc::channel(INBOX_DEPTH);
        let key = self.shared.next_key.fetch_add(1, Ordering::Relaxed);
        {
            let mut routes = self.shared.routes();
            if routes.ended.is_none() {
                routes.boxes.push(Registration {
                    key,
                    request,
                    token: out.progress_token.clone(),
                    tx,
                });
            }
        }
        let inbox = Inbox {
            shared: self.shared.clone(),
            key,
            rx,
            budget,
        };
        self.send(&out.body).await?;
        Ok(inbox)
    }

    /// Writes one message (headers and resume fields mean nothing here).
    pub async fn send(&self, body: &[u8]) -> Result<(), TransportError> {
        send(&self.shared, body).await
    }

    /// Writes a message that expects no reply, best effort and bounded by
    /// [`UNANSWERED_DEADLINE`].
    pub async fn notify(&self, body: &[u8]) {
        let _ = tokio::time::timeout(UNANSWERED_DEADLINE, send(&self.shared, body)).await;
    }

    /// Ends the child politely: stdin is closed, and it is killed if its output has not
    /// ended within [`CLOSE_GRACE`] (or at once, when it must not be waited for).
    pub async fn close(&self) {
        self.close_within(CLOSE_GRACE).await;
    }

    /// [`Self::close`] with another grace.
    pub async fn close_within(&self, grace: Duration) {
        self.shared.closing.store(true, Ordering::SeqCst);
        drop(self.shared.sender.lock().await.take());
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut reader) = reader
            && tokio::time::timeout(grace, &mut reader).await.is_err()
        {
            reader.abort();
        }
    }
}

impl Drop for ChildLink {
    fn drop(&mut self) {
        // The reader owns the process: aborting it drops the process, which kills it.
        self.shared.closing.store(true, Ordering::SeqCst);
        let reader = self
            .reader
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(reader) = reader {
            reader.abort();
        }
    }
}

impl Shared {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn send(shared: &Shared, body: &[u8]) -> Result<(), TransportError> {
    let mut sender = shared.sender.lock().await;
    let Some(sender) = sender.as_mut() else {
        return Err(TransportError::new(
            ErrorKind::Io,
            Delivery::NotSent,
            "the server's input is closed",
        ));
    };
    sender.send(body).await.map_err(|e| {
        TransportError::new(
            ErrorKind::Io,
            Delivery::MaybeSent,
            format!("writing to the server failed: {e}"),
        )
    })
}

/// The reader: routes every message until the output ends, then fails every exchange
/// still waiting.
async fn read(mut process: StdioProcess, shared: Arc<Shared>, on_end: OnEnd) {
    let why = loop {
        match process.recv().await {
            Some(Ok(received)) => deliver(&shared, received).await,
            Some(Err(StdioError::LineTooLong { limit })) => {
                let targets: Vec<_> = shared.routes().boxes.iter().map(|r| r.tx.clone()).collect();
                for tx in targets {
                    let too_long = TransportError::new(
                        ErrorKind::BodyTooLarge { limit },
                        Delivery::MaybeSent,
                        format!("the server wrote a line longer than {limit} bytes"),
                    );
                    hand(&shared, &tx, Err(too_long), true).await;
                }
            }
            Some(Err(e)) => break format!("reading from the server failed: {e}"),
            None => break "the server closed its output".to_owned(),
        }
    };
    let expected = shared.closing.load(Ordering::SeqCst);
    // Reap the child, briefly: its exit status says more than "closed".
    let why = match tokio::time::timeout(Duration::from_millis(500), process.close()).await {
        Ok(Ok(status)) if !expected => format!("{why}: it exited ({status})"),
        _ => why,
    };
    {
        let mut routes = shared.routes();
        routes.ended = Some(why);
        // Dropping the senders wakes every inbox with the end.
        routes.boxes.clear();
    }
    on_end(expected, shared.stderr.clone());
}

/// Hands one message to the exchange it belongs to.
async fn deliver(shared: &Arc<Shared>, mut received: Received) {
    let route = stdio::route(&received.message);
    let exclusive = shared.exclusive.load(Ordering::SeqCst);
    let target = {
        let routes = shared.routes();
        let find = |pick: &dyn Fn(&Registration) -> bool| {
            routes.boxes.iter().find(|r| pick(r)).map(|r| r.tx.clone())
        };
        match &route {
            Route::Response(id) => find(&|r| r.request == *id).map(|tx| (tx, true)),
            Route::Orphan if exclusive => find(&|_| true).map(|tx| (tx, true)),
            Route::Progress(token) => {
                find(&|r| r.token.as_ref() == Some(token)).map(|tx| (tx, false))
            }
            Route::Request if exclusive => find(&|_| true).map(|tx| (tx, false)),
            Route::Request => {
                let framing = routes
                    .framing
                    .clone()
                    .unwrap_or_else(Framing::before_session);
                drop(routes);
                if let Some(answer) = stdio::unattributed(&framing, &received.message)
                    && let Some(slot) = AnswerSlot::take(shared)
                {
                    // Off the reader: a child that does not read its input must not stop
                    // us from reading its output. Bounded in number and in time.
                    tokio::spawn(async move {
                        let _ =
                            tokio::time::timeout(UNANSWERED_DEADLINE, send(&slot.0, &answer.body))
                                .await;
                    });
                }
                return;
            }
            _ => None,
        }
    };
    if let Some((tx, last)) = target {
        received.is_final_response = last;
        hand(shared, &tx, Ok(received), last).await;
    }
}

/// Queues `item` for one exchange: waiting for room on a child that serves one exchange;
/// never on a shared child, where a message that is not `last` (progress) is dropped
/// when it would take the exchange's last free place, and `last` (a response, an
/// error that ends the exchange) takes that place, or is dropped when even that is taken
/// (by an earlier response, which ends the exchange first).
async fn hand(
    shared: &Shared,
    tx: &mpsc::Sender<Result<Received, TransportError>>,
    item: Result<Received, TransportError>,
    last: bool,
) {
    if shared.exclusive.load(Ordering::SeqCst) {
        let _ = tx.send(item).await;
    } else if last || tx.capacity() > 1 {
        // The reader is the only sender: the room seen is there.
        let _ = tx.try_send(item);
    }
}

/// One of the [`ANSWERS_IN_FLIGHT`] places for an answer being written; given back when
/// dropped.
struct AnswerSlot(Arc<Shared>);

impl AnswerSlot {
    fn take(shared: &Arc<Shared>) -> Option<Self> {
        let taken = shared
            .answering
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < ANSWERS_IN_FLIGHT).then_some(n + 1)
            });
        taken.is_ok().then(|| Self(shared.clone()))
    }
}

impl Drop for AnswerSlot {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What one exchange receives: the stdio counterpart of a [`ReplyStream`].
///
/// [`ReplyStream`]: crate::ReplyStream
#[derive(Debug)]
pub struct Inbox {
    shared: Arc<Shared>,
    key: u64,
    rx: mpsc::Receiver<Result<Received, TransportError>>,
    /// The most bytes of the exchange's response.
    budget: usize,
}

impl Inbox {
    /// The next message for the exchange, within its limits (as over HTTP: the response
    /// spends the exchange's budget, any other message is capped on its own); the end of
    /// the child is an error (one that answers `is_stream_ended`).
    pub async fn next(&mut self) -> Result<Received, TransportError> {
        let received = match self.rx.recv().await {
            Some(item) => item?,
            None => {
                let why = self
                    .shared
                    .routes()
                    .ended
                    .clone()
                    .unwrap_or_else(|| "the server closed its output".to_owned());
                return Err(TransportError::new(
                    ErrorKind::StreamEnded,
                    Delivery::MaybeSent,
                    format!("the server process ended ({why})"),
                ));
            }
        };
        let (limit, what) = if received.is_final_response {
            (self.budget, "a response")
        } else {
            (self.shared.message_limit, "a message during the call")
        };
        if received.bytes > limit {
            return Err(TransportError::new(
                ErrorKind::BodyTooLarge { limit },
                Delivery::MaybeSent,
                format!("the server sent {what} longer than {limit} bytes"),
            ));
        }
        Ok(received)
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let key = self.key;
        self.shared.routes().boxes.retain(|r| r.key != key);
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("boxes", &self.boxes.len())
            .field("ended", &self.ended)
            .finish()
    }
}
