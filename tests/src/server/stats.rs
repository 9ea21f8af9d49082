//! What reached the server, kept for test assertions.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::watch;

/// One HTTP request that reached the MCP endpoint, recorded before it was validated.
#[derive(Clone, Default)]
pub struct Received {
    /// HTTP method (`POST`, `DELETE`, `GET`, ...).
    pub http_method: String,
    /// JSON-RPC method, when the body was a request or notification.
    pub method: Option<String>,
    /// JSON-RPC id, when the body was a request or a response.
    pub id: Option<Value>,
    /// The parsed body; `Null` when there was none or it was not JSON.
    pub body: Value,
    /// The body as received, when it was UTF-8 (to check exact bytes, such as numbers).
    pub raw_body: String,
    /// `Mcp-Session-Id` header.
    pub session_id: Option<String>,
    /// `MCP-Protocol-Version` header.
    pub protocol_version: Option<String>,
    /// `Mcp-Method` header.
    pub mcp_method: Option<String>,
    /// `Mcp-Name` header.
    pub mcp_name: Option<String>,
    /// `Accept` header.
    pub accept: Option<String>,
    /// `Authorization` header value (redacted in `Debug`).
    pub authorization: Option<String>,
    /// The HTTP status answered; `None` while the response head has not been produced.
    pub status: Option<u16>,
    /// Every request header, names in lower case, values that are not visible ASCII
    /// left out (see [`Received::header`]).
    pub headers: Vec<(String, String)>,
}

impl Received {
    /// `params.requestId` of a `notifications/cancelled`.
    pub fn cancelled_request_id(&self) -> Option<&Value> {
        (self.method.as_deref() == Some("notifications/cancelled"))
            .then(|| self.body.pointer("/params/requestId"))
            .flatten()
    }

    /// The value of request header `name` (any case), the first when repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the body is a JSON-RPC response (a client's answer to a server request).
    pub fn is_response(&self) -> bool {
        self.method.is_none() && self.id.is_some()
    }
}

impl fmt::Debug for Received {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Received")
            .field("http_method", &self.http_method)
            .field("method", &self.method)
            .field("id", &self.id)
            .field("session_id", &self.session_id)
            .field("protocol_version", &self.protocol_version)
            .field("mcp_method", &self.mcp_method)
            .field("mcp_name", &self.mcp_name)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("status", &self.status)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

/// A snapshot of everything the server saw; see [`TestServer::stats`](super::TestServer::stats).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// TCP connections accepted.
    pub connections: usize,
    /// Every request to the endpoint, in arrival order.
    pub received: Vec<Received>,
    /// Session ids handed out by `initialize`.
    pub sessions_opened: Vec<String>,
    /// Session ids ended by a successful `DELETE`.
    pub sessions_deleted: Vec<String>,
    /// Answers the client POSTed to server requests (`elicitation/create`, `ping`), by
    /// request method, with the full JSON-RPC response.
    pub client_answers: Vec<(String, Value)>,
    /// JSON-RPC ids of calls whose response stream the client closed before the result.
    pub abandoned_streams: Vec<Value>,
}

impl Stats {
    /// JSON-RPC methods received, in order (responses and bodiless requests skipped).
    pub fn methods(&self) -> Vec<&str> {
        self.received
            .iter()
            .filter_map(|r| r.method.as_deref())
            .collect()
    }

    /// How many received messages had JSON-RPC `method`.
    pub fn count(&self, method: &str) -> usize {
        self.methods().iter().filter(|m| **m == method).count()
    }

    /// Messages with JSON-RPC `method`.
    pub fn with_method<'a>(&'a self, method: &'a str) -> impl Iterator<Item = &'a Received> {
        self.received
            .iter()
            .filter(move |r| r.method.as_deref() == Some(method))
    }

    /// `requestId`s of every `notifications/cancelled` received.
    pub fn cancelled_request_ids(&self) -> Vec<Value> {
        self.received
            .iter()
            .filter_map(|r| r.cancelled_request_id().cloned())
            .collect()
    }

    /// Session ids of every `DELETE` request received (whether or not it succeeded).
    pub fn deletes(&self) -> Vec<Option<String>> {
        self.received
            .iter()
            .filter(|r| r.http_method == "DELETE")
            .map(|r| r.session_id.clone())
            .collect()
    }
}

/// Running totals that cost nothing to read, kept even when requests are not
/// ([`ServerConfig::keep_requests`](super::ServerConfig::keep_requests)); see
/// [`TestServer::counters`](super::TestServer::counters).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Counters {
    /// TCP connections accepted.
    pub accepted: usize,
    /// Connections open now.
    pub open: usize,
    /// The most connections open at once since the start or the last
    /// [`TestServer::reset_peak_open`](super::TestServer::reset_peak_open).
    pub peak_open: usize,
    /// HTTP requests to the endpoint.
    pub requests: usize,
    /// `DELETE` requests among them.
    pub deletes: usize,
}

/// The live, shared recorder behind [`Stats`] and [`Counters`].
#[derive(Debug)]
pub(crate) struct Recorder {
    inner: Mutex<Stats>,
    changes: watch::Sender<u64>,
    keep: AtomicBool,
    accepted: AtomicUsize,
    open: AtomicUsize,
    peak_open: AtomicUsize,
    requests: AtomicUsize,
    deletes: AtomicUsize,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            changes: watch::Sender::new(0),
            keep: AtomicBool::new(true),
            accepted: AtomicUsize::new(0),
            open: AtomicUsize::new(0),
            peak_open: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            deletes: AtomicUsize::new(0),
        }
    }
}

/// An open connection, counted in [`Counters::open`] until dropped.
#[derive(Debug)]
pub(crate) struct OpenConnection<'a>(&'a Recorder);

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Recorder {
    /// Changes the stats and wakes every waiter.
    fn with<R>(&self, f: impl FnOnce(&mut Stats) -> R) -> R {
        let out = {
            let mut guard = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut guard)
        };
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        out
    }

    /// A receiver that is marked changed whenever anything is recorded.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub(crate) fn snapshot(&self) -> Stats {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Whether requests and session ids are kept in [`Stats`] (counters always are).
    pub(crate) fn keep(&self, keep: bool) {
        self.keep.store(keep, Ordering::Relaxed);
    }

    /// Whether requests are kept; when not, [`Recorder::received`] only counts them.
    pub(crate) fn keeps(&self) -> bool {
        self.keep.load(Ordering::Relaxed)
    }

    /// Counts an accepted connection; it counts as open while the guard lives.
    pub(crate) fn connection(&self) -> OpenConnection<'_> {
        self.accepted.fetch_add(1, Ordering::Relaxed);
        let open = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak_open.fetch_max(open, Ordering::Relaxed);
        self.with(|s| s.connections += 1);
        OpenConnection(self)
    }

    pub(crate) fn counters(&self) -> Counters {
        Counters {
            accepted: self.accepted.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            peak_open: self.peak_open.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            deletes: self.deletes.load(Ordering::Relaxed),
        }
    }

    /// Starts a new peak from the connections open now.
    pub(crate) fn reset_peak_open(&self) {
        self.peak_open
            .store(self.open.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Counts a request without keeping it; returns the index [`Recorder::answered`]
    /// ignores.
    pub(crate) fn counted(&self, http_method: &str) -> usize {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if http_method == "DELETE" {
            self.deletes.fetch_add(1, Ordering::Relaxed);
        }
        usize::MAX
    }

    /// Records a request; returns its index for [`Recorder::answered`] (`usize::MAX`
    /// when requests are not kept).
    pub(crate) fn received(&self, r: Received) -> usize {
        self.counted(&r.http_method);
        if !self.keeps() {
            return usize::MAX;
        }
        self.with(|s| {
            s.received.push(r);
            s.received.len() - 1
        })
    }

    pub(crate) fn answered(&self, index: usize, status: u16) {
        if index == usize::MAX {
            return;
        }
        self.with(|s| {
            if let Some(r) = s.received.get_mut(index) {
                r.status = Some(status);
            }
        });
    }

    pub(crate) fn session_opened(&self, id: &str) {
        if self.keeps() {
            self.with(|s| s.sessions_opened.push(id.to_owned()));
        }
    }

    pub(crate) fn session_deleted(&self, id: &str) {
        if self.keeps() {
            self.with(|s| s.sessions_deleted.push(id.to_owned()));
        }
    }

    pub(crate) fn client_answer(&self, method: &str, answer: Value) {
        self.with(|s| s.client_answers.push((method.to_owned(), answer)));
    }

    pub(crate) fn abandoned(&self, id: Value) {
        self.with(|s| s.abandoned_streams.push(id));
    }
}
