//! The reply side of one request: a single JSON response, or an SSE stream that is opened
//! as soon as the handler sends anything before its result.

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::body::{Body, Chunk};
use super::config::Reply;
use super::state::Shared;

/// Builds a JSON response with `status`.
pub(crate) fn json_response(status: StatusCode, msg: &Value) -> Response<Body> {
    let mut resp = Response::new(Body::full(msg.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// Formats one SSE event carrying `data` (which must hold no newline).
pub(crate) fn event_bytes(id: Option<u64>, data: &str) -> Bytes {
    let mut s = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    s.push_str("event: message\ndata: ");
    s.push_str(data);
    s.push_str("\n\n");
    Bytes::from(s)
}

/// Starts an SSE response: returns its head and the sender feeding its body.
pub(crate) fn sse_response() -> (Response<Body>, mpsc::Sender<Chunk>) {
    let (tx, body) = Body::channel();
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    h.insert("x-accel-buffering", header::HeaderValue::from_static("no"));
    (resp, tx)
}

/// Where a request handler writes its messages.
#[derive(Debug)]
pub(crate) struct Out {
    shared: Arc<Shared>,
    request_id: Value,
    reply: Reply,
    priming: bool,
    head: Option<oneshot::Sender<Response<Body>>>,
    tx: Option<mpsc::Sender<Chunk>>,
}

impl Out {
    /// A reply sink for request `request_id`; the response head goes out through `head`.
    pub(crate) fn new(
        shared: Arc<Shared>,
        request_id: Value,
        priming: bool,
        head: oneshot::Sender<Response<Body>>,
    ) -> Self {
        let reply = shared.config.reply;
        Self {
            shared,
            request_id,
            reply,
            priming,
            head: Some(head),
            tx: None,
        }
    }

    /// The JSON-RPC id of the request being answered.
    pub(crate) fn request_id(&self) -> &Value {
        &self.request_id
    }

    /// The shared server state.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Sends a complete response of our own making (only before a stream was opened).
    pub(crate) fn respond(&mut self, resp: Response<Body>) {
        if let Some(head) = self.head.take() {
            let _ = head.send(resp);
        }
    }

    /// Opens the SSE stream if it is not open yet.
    pub(crate) fn open_stream(&mut self) {
        if self.tx.is_some() {
            return;
        }
        let (resp, tx) = sse_response();
        if self.priming {
            let n = self.shared.next_number();
            let _ = tx.try_send(Ok(Bytes::from(format!("id: {n}\ndata: \n\n"))));
        }
        if let Some(head) = self.head.take() {
            let _ = head.send(resp);
        }
        self.tx = Some(tx);
    }

    async fn send(&mut self, chunk: Bytes) -> bool {
        self.open_stream();
        let sent = match &self.tx {
            Some(tx) => tx.send(Ok(chunk)).await.is_ok(),
            None => false,
        };
        if !sent {
            self.shared.stats.abandoned(self.request_id.clone());
            self.tx = None;
        }
        sent
    }

    /// Sends one message as an SSE event; false when the client has gone.
    pub(crate) async fn event(&mut self, msg: &Value) -> bool {
        let id = self.shared.next_number();
        self.send(event_bytes(Some(id), &msg.to_string())).await
    }

    /// Sends an SSE comment (keeps the stream alive, detects a closed client).
    pub(crate) async fn comment(&mut self) -> bool {
        self.send(Bytes::from_static(b": keep-alive\n\n")).await
    }

    /// Sends a server→client request on the stream and waits for the client's answer.
    /// `None` when the client closed the stream first.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        let id = json!(format!("srv-{}", self.shared.next_number()));
        let answer = self.shared.expect_answer(&id, method);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.open_stream();
        let tx = self.tx.clone();
        if !self.event(&msg).await {
            self.shared.forget_answer(&id);
            return None;
        }
        let tx = tx?;
        tokio::select! {
            got = answer => got.ok(),
            () = tx.closed() => {
                self.shared.forget_answer(&id);
                self.shared.stats.abandoned(self.request_id.clone());
                None
            }
        }
    }

    /// Sends the final JSON-RPC message and ends the reply.
    pub(crate) async fn finish(mut self, msg: Value) {
        if self.tx.is_none() && self.reply == Reply::Json {
            self.respond(json_response(StatusCode::OK, &msg));
            return;
        }
        self.event(&msg).await;
    }

    /// Sends a final error: as JSON with `status` unless a stream is already open.
    pub(crate) async fn finish_with_status(mut self, status: StatusCode, msg: Value) {
        if self.tx.is_none() {
            self.respond(json_response(status, &msg));
            return;
        }
        self.event(&msg).await;
    }
}

/// Answers with one message, framed as the config says (JSON, or SSE with one event).
pub(crate) fn reply_once(shared: &Shared, msg: &Value) -> Response<Body> {
    match shared.config.reply {
        Reply::Json => json_response(StatusCode::OK, msg),
        Reply::Sse => {
            let (resp, tx) = sse_response();
            let _ = tx.try_send(Ok(event_bytes(
                Some(shared.next_number()),
                &msg.to_string(),
            )));
            resp
        }
    }
}
