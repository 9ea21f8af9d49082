//! The reply stream of one POST: JSON or SSE, ending at our response.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, Uri};

use crate::body::{self, Budget};
use crate::client::{HttpClient, Outgoing, Place, place};
use crate::error::{Delivery, ErrorKind, TransportError};
use brain_mcp_proto::client::Header;
use brain_mcp_proto::jsonrpc::Inbound;
use brain_mcp_proto::text::Secrets;

use crate::headers::{self, BearerToken, LAST_EVENT_ID};
use crate::media::{self, ContentType};
use crate::observe::ExchangeLog;
use crate::pool::Reply;
use crate::post::unexpected;
use crate::rpc::{self, RequestId, Role};
use crate::sse::{SseDecoder, SseError, SseEvent};

/// One JSON-RPC message the server sent for our POST, decoded once.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Received {
    /// The message, decoded (the client core reads it without decoding it again).
    pub message: Inbound,
    /// This is the response to our request; the stream ends after it. An error
    /// response without an id also counts (the server could not read our request).
    pub is_final_response: bool,
    /// The SSE event id this message arrived with, if any.
    pub event_id: Option<String>,
    /// The size of the message's text, in bytes.
    pub bytes: usize,
}

impl Received {
    /// A message received some other way than over HTTP (a line of a child process's
    /// output), for drivers that handle both alike.
    pub fn new(message: Inbound, is_final_response: bool, bytes: usize) -> Self {
        Self {
            message,
            is_final_response,
            event_id: None,
            bytes,
        }
    }
}

/// What a stream needs to resume with `GET` + `Last-Event-ID`, when the caller allows it.
#[derive(Debug)]
pub(crate) struct Resume {
    pub(crate) client: HttpClient,
    pub(crate) url: Uri,
    pub(crate) headers: Vec<Header>,
    /// One header per attempt, in order (a DPoP proof each).
    pub(crate) proofs: Vec<Header>,
    pub(crate) bearer: Option<BearerToken>,
    /// The exchange's secrets, for the resuming GET's log.
    pub(crate) secrets: Secrets,
    pub(crate) max_attempts: u32,
    pub(crate) attempts: u32,
}

/// The messages a server sends for one POST, in order, ending with our response.
///
/// Dropping it early closes its connection (nothing is drained, no task is left).
#[derive(Debug)]
pub struct ReplyStream {
    // Boxed: the state is large and `PostReply` moves it around.
    inner: Box<State>,
}

#[derive(Debug)]
struct State {
    at: Place,
    /// The reply's body, which holds its connection until it is dropped.
    body: Option<Reply>,
    content_type: ContentType,
    session_id: Option<String>,
    id: RequestId,
    /// Bytes our response may take (a JSON reply: the whole body).
    budget: Budget,
    /// The bytes an event stream carries around our response: progress, log lines,
    /// priming events and comments are bounded one by one, never in total (the call's
    /// deadline bounds how long they may go on).
    wire: Budget,
    client: HttpClient,
    sse: SseDecoder,
    queue: VecDeque<Received>,
    resume: Option<Resume>,
    events: Vec<SseEvent>,
    /// The exchange's event, written when our response is read (or the stream fails or
    /// is dropped); its secrets are removed from every error this stream returns.
    log: ExchangeLog,
}

impl ReplyStream {
    #[allow(clippy::too_many_arguments)] // one constructor, called once, from `post`
    pub(crate) fn new(
        at: Place,
        body: Reply,
        content_type: ContentType,
        session_id: Option<String>,
        id: RequestId,
        budget: Budget,
        client: HttpClient,
        resume: Option<Resume>,
        log: ExchangeLog,
    ) -> Self {
        let config = client.config();
        let event_limit = config
            .sse_event_limit
            .min(budget.limit().max(config.message_limit));
        let inner = Box::new(State {
            at,
            body: Some(body),
            content_type,
            session_id,
            id,
            budget,
            wire: Budget::unlimited(),
            client,
            sse: SseDecoder::new(event_limit),
            queue: VecDeque::new(),
            resume,
            events: Vec::new(),
            log,
        });
        Self { inner }
    }

    /// The reply's validated `Mcp-Session-Id`, if it had one.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.session_id.as_deref()
    }

    /// Whether the reply is a JSON body or an event stream.
    pub fn content_type(&self) -> ContentType {
        self.inner.content_type
    }

    /// The next message, `None` after our response (or after an error).
    ///
    /// Dropping the future or the stream abandons the exchange and closes its
    /// connection; a message already decoded but not yet returned is lost with it.
    pub async fn next(&mut self) -> Option<Result<Received, TransportError>> {
        self.inner.next().await
    }
}

impl State {
    async fn next(&mut self) -> Option<Result<Received, TransportError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                if item.is_final_response {
                    self.queue.clear();
                    self.finish().await;
                    self.log.end("ok");
                }
                return Some(Ok(item));
            }
            self.body.as_ref()?;
            let step = match self.content_type {
                ContentType::Json => self.read_json().await,
                ContentType::EventStream => self.read_sse().await,
            };
            if let Err(e) = step {
                // Dropping the body discards the connection.
                self.body = None;
                self.log.end(e.kind_name());
                return Some(Err(e.finished(self.log.secrets())));
            }
        }
    }

    /// Reads the remaining bytes (bounded) so the connection can be pooled.
    async fn finish(&mut self) {
        if let Some(mut b) = self.body.take() {
            let limit = self
                .client
                .config()
                .drain_limit
                .min(self.budget.remaining());
            // Read to its end, the body gives its connection back for the next
            // request; cut short, the connection closes with it.
            body::drain(&mut b, limit, self.client.config().drain_timeout).await;
        }
    }

    async fn read_json(&mut self) -> Result<(), TransportError> {
        let Some(b) = self.body.as_mut() else {
            return Ok(());
        };
        let bytes = body::read_all(b, &mut self.budget).await?;
        self.log.bytes(bytes.len());
        // The body is complete: its connection goes back to the pool.
        self.body = None;
        let text = utf8(&self.at, bytes)?;
        self.log.body("received", text.as_bytes());
        let messages = rpc::split(&text, &self.id)
            .map_err(|e| unexpected(format!("{}: the JSON reply is not JSON-RPC: {e}", self.at)))?;
        let Some(last) = messages.iter().position(|p| p.role == Role::OurResponse) else {
            return Err(unexpected(format!(
                "{}: the JSON reply is not the response to request {}",
                self.at, self.id
            )));
        };
        for (i, piece) in messages.into_iter().take(last + 1).enumerate() {
            self.queue.push_back(Received {
                message: piece.message,
                is_final_response: i == last,
                event_id: None,
                bytes: piece.bytes,
            });
        }
        Ok(())
    }

    async fn read_sse(&mut self) -> Result<(), TransportError> {
        let Some(b) = self.body.as_mut() else {
            return Ok(());
        };
        let Some(chunk) = body::next_chunk(b, &mut self.wire).await? else {
            self.sse.finish();
            return self.stream_ended().await;
        };
        self.log.bytes(chunk.len());
        let mut events = std::mem::take(&mut self.events);
        let fed = self.sse.feed(&chunk, &mut events);
        let result = fed.map_err(|e| sse_error(&self.at, e)).and_then(|()| {
            for ev in events.drain(..) {
                self.push_event(ev)?;
            }
            Ok(())
        });
        events.clear();
        self.events = events;
        result
    }

    fn push_event(&mut self, ev: SseEvent) -> Result<(), TransportError> {
        // Priming events (an id, no data) only move the resume point.
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        self.log.body("received", ev.data.as_bytes());
        let messages = rpc::split(&ev.data, &self.id)
            .map_err(|e| unexpected(format!("{}: an SSE event is not JSON-RPC: {e}", self.at)))?;
        for piece in messages {
            let role = piece.role;
            if role == Role::OurResponse {
                self.budget.take(piece.bytes)?;
            } else {
                let limit = self.client.config().message_limit;
                if piece.bytes > limit {
                    return Err(TransportError::new(
                        ErrorKind::BodyTooLarge { limit },
                        Delivery::MaybeSent,
                        format!(
                            "{}: a message before the response exceeds the {limit}-byte \
                             limit on such messages",
                            self.at
                        ),
                    ));
                }
            }
            self.queue.push_back(Received {
                message: piece.message,
                is_final_response: role == Role::OurResponse,
                event_id: ev.id.clone(),
                bytes: piece.bytes,
            });
            if role == Role::OurResponse {
                break;
            }
        }
        Ok(())
    }

    /// The event stream ended without our response: resume or fail at once.
    async fn stream_ended(&mut self) -> Result<(), TransportError> {
        self.body = None;
        let ended = |at: &Place, why: &str| {
            TransportError::new(
                ErrorKind::StreamEnded,
                Delivery::MaybeSent,
                format!("{at}: the event stream ended before the response ({why})"),
            )
        };
        let Some(resume) = self.resume.as_mut() else {
            return Err(ended(&self.at, "resuming is off for this exchange"));
        };
        let Some(last_id) = self.sse.last_event_id().map(str::to_owned) else {
            return Err(ended(&self.at, "no event id to resume from"));
        };
        let mut last_failure = None;
        while resume.attempts < resume.max_attempts {
            resume.attempts += 1;
            let wait = self
                .sse
                .retry()
                .map_or(self.client.config().default_retry, Duration::from_millis)
                .min(self.client.config().max_retry);
            tokio::time::sleep(wait).await;
            match resume_get(resume, &last_id, &mut self.budget).await {
                Ok(body) => {
                    self.body = Some(body);
                    self.sse.restart();
                    return Ok(());
                }
                Err(e) => last_failure = Some(e),
            }
        }
        let why = format!("{} resume attempt(s) failed", resume.attempts);
        let err = ended(&self.at, &why);
        Err(match last_failure {
            Some(source) => err.with_source(source),
            None => err,
        })
    }
}

/// One `GET` with `Last-Event-ID`; only a `200` event stream resumes.
async fn resume_get(
    resume: &Resume,
    last_id: &str,
    budget: &mut Budget,
) -> Result<Reply, TransportError> {
    let at = place(&Method::GET, &resume.url);
    let value = HeaderValue::from_str(last_id).map_err(|_| {
        TransportError::new(
            ErrorKind::UnexpectedReply,
            Delivery::NotSent,
            format!("{at}: the last event id cannot be sent as a header"),
        )
    })?;
    let build = || -> Result<HeaderMap, TransportError> {
        let mut map = HeaderMap::new();
        map.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers::apply(&resume.headers, resume.bearer.as_ref(), &mut map)?;
        // The attempt under way is counted already.
        let attempt = resume.attempts.saturating_sub(1) as usize;
        if let Some(proof) = resume.proofs.get(attempt) {
            headers::apply(std::slice::from_ref(proof), None, &mut map)?;
        }
        map.insert(LAST_EVENT_ID, value.clone());
        Ok(map)
    };
    let out = Outgoing {
        method: Method::GET,
        url: resume.url.clone(),
        headers: &build,
        body: Bytes::new(),
        idempotent: true,
        background: false,
        follow: true,
    };
    // The resumed stream's bytes are counted in the exchange's own event; this one says
    // how the GET went.
    let mut log = ExchangeLog::start("GET", resume.secrets.clone());
    let mut resp = resume.client.send(out, &mut log).await?;
    log.end(if resp.status().is_success() {
        "ok"
    } else {
        "status"
    });
    if !resp.status().is_success() {
        return Err(resume.client.status_error(&at, &mut resp, budget).await);
    }
    let is_sse = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(media::classify)
        == Some(ContentType::EventStream);
    if !is_sse {
        return Err(unexpected(format!(
            "{at}: the resumed stream is not an event stream"
        )));
    }
    // The resumed stream holds its connection as the first one did.
    Ok(resp.into_body())
}

fn sse_error(at: &Place, e: SseError) -> TransportError {
    match e {
        SseError::EventTooLarge { limit } => TransportError::new(
            ErrorKind::BodyTooLarge { limit },
            Delivery::MaybeSent,
            format!("{at}: {e}"),
        ),
    }
}

fn utf8(at: &Place, bytes: Bytes) -> Result<String, TransportError> {
    String::from_utf8(Vec::from(bytes))
        .map_err(|_| unexpected(format!("{at}: the JSON reply is not UTF-8")))
}
