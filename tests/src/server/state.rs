//! State shared by every connection of one server: config, sessions, pending server requests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::oneshot;

use super::config::{Era, ServerConfig};
use super::stats::Recorder;

/// One handshake-era session.
#[derive(Debug)]
pub(crate) struct Session {
    /// The version agreed by `initialize`.
    pub(crate) version: String,
}

/// A server→client request waiting for the client's POSTed answer.
#[derive(Debug)]
struct Pending {
    method: String,
    answer: oneshot::Sender<Value>,
}

/// Everything the connections of one server share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    era: Mutex<Era>,
    pub(crate) stats: Recorder,
    sessions: Mutex<HashMap<String, Session>>,
    pending: Mutex<HashMap<String, Pending>>,
    counter: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn new(config: ServerConfig) -> Self {
        let stats = Recorder::default();
        stats.keep(config.keep_requests);
        Self {
            era: Mutex::new(config.era),
            config,
            stats,
            sessions: Mutex::default(),
            pending: Mutex::default(),
            counter: AtomicU64::new(1),
        }
    }

    /// The era served now (starts as `config.era`; tests may switch it).
    pub(crate) fn era(&self) -> Era {
        *lock(&self.era)
    }

    pub(crate) fn set_era(&self, era: Era) {
        *lock(&self.era) = era;
    }

    /// A number unique within this server.
    pub(crate) fn next_number(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    /// Opens a session and returns its id (visible ASCII only).
    pub(crate) fn open_session(&self, version: &str) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let id = format!("sess-{}-{nanos:08x}", self.next_number());
        lock(&self.sessions).insert(
            id.clone(),
            Session {
                version: version.to_owned(),
            },
        );
        self.stats.session_opened(&id);
        id
    }

    /// The negotiated version of a live session.
    pub(crate) fn session_version(&self, id: &str) -> Option<String> {
        lock(&self.sessions).get(id).map(|s| s.version.clone())
    }

    /// Ends a session; false when it did not exist.
    pub(crate) fn close_session(&self, id: &str) -> bool {
        let existed = lock(&self.sessions).remove(id).is_some();
        if existed {
            self.stats.session_deleted(id);
        }
        existed
    }

    /// Registers a server request with JSON-RPC `id`; the receiver gets the client's answer.
    pub(crate) fn expect_answer(&self, id: &Value, method: &str) -> oneshot::Receiver<Value> {
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(
            id.to_string(),
            Pending {
                method: method.to_owned(),
                answer: tx,
            },
        );
        rx
    }

    /// Drops a server request nobody will answer any more.
    pub(crate) fn forget_answer(&self, id: &Value) {
        lock(&self.pending).remove(&id.to_string());
    }

    /// Routes a client's JSON-RPC response; false when no server request had that id.
    pub(crate) fn deliver_answer(&self, response: &Value) -> bool {
        let Some(id) = response.get("id") else {
            return false;
        };
        let Some(pending) = lock(&self.pending).remove(&id.to_string()) else {
            return false;
        };
        self.stats.client_answer(&pending.method, response.clone());
        // The waiting call may have been abandoned meanwhile; the answer is still recorded.
        let _ = pending.answer.send(response.clone());
        true
    }
}
