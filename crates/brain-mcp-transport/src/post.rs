//! The POST exchange and the session DELETE.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use http::{Method, Response, StatusCode, Uri};
use hyper::body::Incoming;

use crate::body::{self, Budget};
use crate::client::{HttpClient, Outgoing, place};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::headers::{self, McpHeaders};
use crate::load::Busy;
use crate::media::{self, ContentType};
use crate::rpc::{self, RequestId};
use crate::stream::{ReplyStream, Resume};

/// The `Accept` value of every POST.
const ACCEPT_POST: &str = "application/json, text/event-stream";

/// What the POST's body is, and therefore what reply it must get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A request with this id: the reply must carry its response.
    Response(RequestId),
    /// A notification, or our response to a server request: `202`/`204`/empty `200`.
    Accepted,
}

/// Whether a reply stream that breaks before our response may be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumePolicy {
    /// Handshake era (2025 revisions): after the server's `retry`, resume with `GET`
    /// and `Last-Event-ID` when events carried ids, at most `max_attempts` times.
    Handshake {
        /// Bound on resume GETs for this exchange.
        max_attempts: u32,
    },
    /// 2026 era: a broken stream loses the request; never resume.
    Never,
}

/// One POST of one encoded JSON-RPC message.
#[derive(Debug, Clone)]
pub struct PostRequest {
    /// The MCP endpoint.
    pub url: Uri,
    /// Exactly one encoded JSON-RPC message.
    pub body: Bytes,
    /// What the reply must be.
    pub expect: Expect,
    /// MCP headers and the bearer token.
    pub headers: McpHeaders,
    /// Bytes the server may send back for this exchange, over all bodies.
    pub budget: usize,
    /// Resumption after a broken stream.
    pub resume: ResumePolicy,
    /// The message has no side effects (`initialize`, `server/discover`,
    /// `tools/list`): it may be resent once when a pooled connection proves stale.
    /// Never set it for `tools/call`.
    pub idempotent: bool,
}

/// The server's reply to a POST.
#[derive(Debug)]
pub enum PostReply {
    /// `202`, `204` or an empty `200`: the notification or response was accepted.
    Accepted,
    /// The messages the server sends for our request, ending at its response.
    Stream(ReplyStream),
}

impl HttpClient {
    /// POSTs one message and returns the server's reply.
    ///
    /// Dropping the returned future stops the exchange; the connection is closed
    /// unless it had finished. See the crate docs for the delivery contract.
    pub async fn post(&self, req: PostRequest) -> Result<PostReply, TransportError> {
        let build = || -> Result<HeaderMap, TransportError> {
            let mut map = HeaderMap::new();
            map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            map.insert(ACCEPT, HeaderValue::from_static(ACCEPT_POST));
            req.headers.apply(&mut map)?;
            Ok(map)
        };
        let out = Outgoing {
            method: Method::POST,
            url: req.url.clone(),
            headers: &build,
            body: req.body,
            idempotent: req.idempotent,
            background: false,
        };
        let mut resp = self.send(out).await?;
        let at = place(&Method::POST, &req.url);
        let status = resp.status();
        let mut budget = Budget::new(req.budget);
        if !status.is_success() {
            let had_session = req.headers.session_id.is_some();
            return Err(self
                .status_error(&at, &mut resp, had_session, &mut budget)
                .await);
        }
        let session_id = headers::session_id_of(resp.headers())?;
        let id = match req.expect {
            Expect::Accepted => {
                // A body on an accepted message means nothing. It is drained briefly so
                // the connection can be reused; one that goes on (say, an event stream
                // left open) is dropped with its connection rather than waited for.
                let cfg = &self.inner.config;
                let limit = cfg.drain_limit.min(budget.remaining());
                body::drain(resp.body_mut(), limit, cfg.drain_timeout).await;
                return Ok(PostReply::Accepted);
            }
            Expect::Response(id) => id,
        };
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Err(unexpected(format!(
                "{at}: the server answered a request with {status} instead of its response"
            )));
        }
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(media::classify);
        let Some(content_type) = content_type else {
            let shown = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .and_then(media::essence)
                .unwrap_or_else(|| "no content type".to_owned());
            return Err(unexpected(format!(
                "{at}: the reply to a request has {shown}; expected JSON or an event stream"
            )));
        };
        let resume = match (content_type, req.resume) {
            (ContentType::EventStream, ResumePolicy::Handshake { max_attempts }) => Some(Resume {
                client: self.clone(),
                url: req.url,
                headers: McpHeaders {
                    method: None,
                    name: None,
                    params: Vec::new(),
                    ..req.headers
                },
                max_attempts,
                attempts: 0,
            }),
            _ => None,
        };
        let busy = resp.extensions_mut().remove::<Busy>();
        Ok(PostReply::Stream(ReplyStream::new(
            at,
            (resp.into_body(), busy),
            content_type,
            session_id,
            id,
            budget,
            self.clone(),
            resume,
        )))
    }

    /// Ends a handshake-era session with `DELETE`, bounded by `deadline`.
    ///
    /// `2xx` and `405` (the server does not let clients end sessions) are success.
    /// `404` is reported as [`ErrorKind::SessionExpired`]: the session is gone anyway.
    pub async fn delete_session(
        &self,
        url: &Uri,
        session_id: &str,
        headers: &McpHeaders,
        deadline: Duration,
    ) -> Result<(), TransportError> {
        let at = place(&Method::DELETE, url);
        let headers = McpHeaders {
            session_id: Some(session_id.to_owned()),
            method: None,
            name: None,
            params: Vec::new(),
            ..headers.clone()
        };
        let build = || -> Result<HeaderMap, TransportError> {
            let mut map = HeaderMap::new();
            headers.apply(&mut map)?;
            Ok(map)
        };
        let work = async {
            // A session ends off the caller's path: unless configured otherwise, it waits
            // its turn for a connection already open rather than opening one that the
            // next calls would then compete for.
            let out = Outgoing {
                method: Method::DELETE,
                url: url.clone(),
                headers: &build,
                body: Bytes::new(),
                idempotent: true,
                background: !self.inner.config.cleanup_opens_connections,
            };
            let mut resp = self.send(out).await?;
            let status = resp.status();
            if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
                let cfg = &self.inner.config;
                body::drain(resp.body_mut(), cfg.drain_limit, cfg.drain_timeout).await;
                return Ok(());
            }
            let mut budget = Budget::new(self.inner.config.error_body_limit);
            Err(self.status_error(&at, &mut resp, true, &mut budget).await)
        };
        match tokio::time::timeout(deadline, work).await {
            Ok(result) => result,
            Err(_) => Err(TransportError::new(
                ErrorKind::Timeout,
                Delivery::MaybeSent,
                format!("{at}: no reply within {} ms", deadline.as_millis()),
            )),
        }
    }

    /// Turns a non-success reply into a typed error, reading a bounded prefix of its body.
    pub(crate) async fn status_error(
        &self,
        at: &str,
        resp: &mut Response<Incoming>,
        had_session: bool,
        budget: &mut Budget,
    ) -> TransportError {
        let status = resp.status();
        if status == StatusCode::NOT_FOUND && had_session {
            return TransportError::new(
                ErrorKind::SessionExpired,
                Delivery::Answered,
                format!(
                    "{at}: the server answered 404 to a request with a session id: the session has expired"
                ),
            );
        }
        let www_authenticate = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => resp
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            _ => None,
        };
        let is_json = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(media::classify)
            == Some(ContentType::Json);
        let cap = self.inner.config.error_body_limit.min(budget.remaining());
        let rpc = match body::read_prefix(resp.body_mut(), cap).await {
            Some(bytes) if is_json => rpc::error_of(&bytes),
            _ => None,
        };
        let detail = match &rpc {
            Some((code, message)) => format!(" (JSON-RPC error {}: {message})", code.0),
            None => String::new(),
        };
        TransportError::new(
            ErrorKind::Status {
                status,
                rpc,
                www_authenticate,
            },
            Delivery::Answered,
            format!("{at}: the server answered {status}{detail}"),
        )
    }
}

pub(crate) fn unexpected(message: String) -> TransportError {
    TransportError::new(ErrorKind::UnexpectedReply, Delivery::Answered, message)
}
