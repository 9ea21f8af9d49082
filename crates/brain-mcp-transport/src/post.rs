//! The POST exchange and the DELETE.

use std::time::Duration;

use brain_mcp_proto::client::{Expect, Header};
use brain_mcp_proto::text::Secrets;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{Method, Response, StatusCode, Uri};

use crate::body::{self, Budget};
use crate::client::{HttpClient, Outgoing, Place, place};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::headers::DPOP_NONCE;
use crate::headers::{self, BearerToken};
use crate::media::{self, ContentType};
use crate::observe::ExchangeLog;
use crate::pool::Reply;
use crate::stream::{ReplyStream, Resume};

/// The `Accept` value of every POST.
const ACCEPT_POST: &str = "application/json, text/event-stream";

/// One POST of one encoded JSON-RPC message.
///
/// The transport knows nothing of protocol eras: the caller gives the headers (the MCP
/// client core builds them), the byte budget and how often a broken reply stream may be
/// resumed, and with which headers.
/// Its `Debug` shows the URL's origin, the header names (values of fixed protocol
/// headers only), the body's size and the budgets: the path, query, body and a session id
/// may hold secrets.
#[derive(Clone)]
#[non_exhaustive]
pub struct PostRequest {
    /// The endpoint.
    pub url: Uri,
    /// Exactly one encoded JSON-RPC message.
    pub body: Bytes,
    /// What the reply must be.
    pub expect: Expect,
    /// Headers besides `Content-Type`, `Accept` and `Authorization`.
    pub headers: Vec<Header>,
    /// Sent as `Authorization: Bearer ...`, to this URL's origin only; also removed from
    /// every error and log line of the exchange.
    pub bearer: Option<BearerToken>,
    /// Other secrets to remove from every error and log line of the exchange (besides the
    /// bearer token and the client's proxy credentials, which are always removed).
    pub secrets: Secrets,
    /// Bytes the server may send back for this exchange, over all bodies.
    pub budget: usize,
    /// How often an event stream that ends before the response may be resumed with `GET`
    /// and `Last-Event-ID` (after the server's `retry`); 0 never.
    pub resume_attempts: u32,
    /// The headers of a resuming `GET`.
    pub resume_headers: Vec<Header>,
    /// A header for each resuming `GET` of its own, in order, the first for the first
    /// attempt (a DPoP proof: one proof per request); none past the last.
    pub resume_proofs: Vec<Header>,
    /// The message has no side effects: it may be resent once when a pooled connection
    /// proves stale. Never set it for a message with effects (`tools/call`).
    pub idempotent: bool,
}

impl std::fmt::Debug for PostRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostRequest")
            .field("origin", &crate::origin::origin(&self.url))
            .field("body_bytes", &self.body.len())
            .field("expect", &self.expect)
            .field("headers", &self.headers)
            .field("bearer", &self.bearer)
            .field("secrets", &self.secrets)
            .field("budget", &self.budget)
            .field("resume_attempts", &self.resume_attempts)
            .field("idempotent", &self.idempotent)
            .finish_non_exhaustive()
    }
}

impl PostRequest {
    /// A POST of `body` to `url` expecting `expect`, with no extra header, no token, a
    /// 1 MiB budget, no resuming, not idempotent.
    pub fn new(url: Uri, body: impl Into<Bytes>, expect: Expect) -> Self {
        Self {
            url,
            body: body.into(),
            expect,
            headers: Vec::new(),
            bearer: None,
            secrets: Secrets::none(),
            budget: 1 << 20,
            resume_attempts: 0,
            resume_headers: Vec::new(),
            resume_proofs: Vec::new(),
            idempotent: false,
        }
    }
}

/// The server's reply to a POST.
#[derive(Debug)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: a POST is accepted or answered with a stream
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
        let secrets = self.secrets_of(&req.secrets, req.bearer.as_ref());
        let log = ExchangeLog::start("POST", secrets.clone());
        // Boxed: the exchange's state (the pool's checkout, hyper's send, the reply's
        // first read; about 3.5 KB) is then moved once, into the box, and not again by
        // each of the caller's layers that awaits this future (every call's request
        // passes through several).
        Box::pin(self.post_unredacted(req, log))
            .await
            .map_err(|e| e.finished(&secrets))
    }

    /// POSTs one request and returns the stream of its replies: [`Self::post`] for a
    /// message that expects a response (a request never gets `Accepted`: a `202` to it is
    /// an error).
    pub async fn request(&self, req: PostRequest) -> Result<ReplyStream, TransportError> {
        match self.post(req).await? {
            PostReply::Stream(stream) => Ok(stream),
            PostReply::Accepted => Err(unexpected(
                "the server accepted a request without answering it".into(),
            )),
        }
    }

    /// Every secret an exchange must keep out of its errors and logs: the caller's, the
    /// bearer token and the client's proxy credentials.
    pub(crate) fn secrets_of(&self, secrets: &Secrets, bearer: Option<&BearerToken>) -> Secrets {
        self.inner
            .proxy_secrets
            .union(secrets)
            .with(bearer.map(BearerToken::expose))
    }

    async fn post_unredacted(
        &self,
        req: PostRequest,
        mut log: ExchangeLog,
    ) -> Result<PostReply, TransportError> {
        let build = || -> Result<HeaderMap, TransportError> {
            let mut map = HeaderMap::new();
            map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            map.insert(ACCEPT, HeaderValue::from_static(ACCEPT_POST));
            headers::apply(&req.headers, req.bearer.as_ref(), &mut map)?;
            Ok(map)
        };
        log.body("sent", &req.body);
        let out = Outgoing {
            method: Method::POST,
            url: req.url.clone(),
            headers: &build,
            body: req.body,
            idempotent: req.idempotent,
            background: false,
            follow: true,
        };
        let mut resp = self.send(out, &mut log).await?;
        let at = place(&Method::POST, &req.url);
        let status = resp.status();
        let mut budget = Budget::new(req.budget);
        if !status.is_success() {
            let error = self.status_error(&at, &mut resp, &mut budget).await;
            log.end("status");
            return Err(error);
        }
        let session_id = headers::session_id_of(resp.headers()).inspect_err(|e| {
            log.end(e.kind_name());
        })?;
        let Expect::Response(id) = req.expect else {
            // A body on an accepted message means nothing. It is drained briefly so the
            // connection can be reused; one that goes on (say, an event stream left open)
            // is dropped with its connection rather than waited for.
            let cfg = &self.inner.config;
            let limit = cfg.drain_limit.min(budget.remaining());
            body::drain(resp.body_mut(), limit, cfg.drain_timeout).await;
            log.end("accepted");
            return Ok(PostReply::Accepted);
        };
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            log.end("unexpected_reply");
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
            log.end("unexpected_reply");
            return Err(unexpected(format!(
                "{at}: the reply to a request has {shown}; expected JSON or an event stream"
            )));
        };
        let resume = match content_type {
            ContentType::EventStream if req.resume_attempts > 0 => Some(Resume {
                client: self.clone(),
                url: req.url,
                headers: req.resume_headers,
                proofs: req.resume_proofs,
                bearer: req.bearer.clone(),
                secrets: log.secrets().clone(),
                max_attempts: req.resume_attempts,
                attempts: 0,
            }),
            _ => None,
        };
        Ok(PostReply::Stream(ReplyStream::new(
            at,
            resp.into_body(),
            content_type,
            session_id,
            id,
            budget,
            self.clone(),
            resume,
            log,
        )))
    }

    /// Sends `DELETE` to `url` with `headers`, bounded by `deadline` (on the client's
    /// [`background_timer`](Self::background_timer): up to
    /// [`BACKGROUND_GRID`](crate::BACKGROUND_GRID) later), and returns the status the
    /// server answered (what it means is the caller's to decide).
    pub async fn delete(
        &self,
        url: &Uri,
        headers: &[Header],
        bearer: Option<&BearerToken>,
        secrets: &Secrets,
        deadline: Duration,
    ) -> Result<StatusCode, TransportError> {
        self.delete_answer(url, headers, bearer, secrets, deadline)
            .await
            .map(|answer| answer.status)
    }

    /// [`Self::delete`], with what a `401` answer said about authorization: its
    /// `WWW-Authenticate` and `DPoP-Nonce` (read only for a 401, so other answers cost
    /// what they did).
    pub async fn delete_answer(
        &self,
        url: &Uri,
        headers: &[Header],
        bearer: Option<&BearerToken>,
        secrets: &Secrets,
        deadline: Duration,
    ) -> Result<Deleted, TransportError> {
        let secrets = self.secrets_of(secrets, bearer);
        let at = place(&Method::DELETE, url);
        let build = || -> Result<HeaderMap, TransportError> {
            let mut map = HeaderMap::new();
            headers::apply(headers, bearer, &mut map)?;
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
                follow: true,
            };
            let mut log = ExchangeLog::start("DELETE", secrets.clone());
            let mut resp = self.send(out, &mut log).await?;
            let status = resp.status();
            let refused = (status == StatusCode::UNAUTHORIZED).then(|| {
                let header = |name| {
                    resp.headers()
                        .get(name)
                        .and_then(|v: &HeaderValue| v.to_str().ok())
                        .map(|v| brain_mcp_proto::text::prefix(v, 1024).to_owned())
                };
                (
                    header(WWW_AUTHENTICATE),
                    header(http::HeaderName::from_static(DPOP_NONCE)),
                )
            });
            let cfg = &self.inner.config;
            body::drain(resp.body_mut(), cfg.drain_limit, cfg.drain_timeout).await;
            log.end("ok");
            let (www_authenticate, dpop_nonce) = refused.unwrap_or_default();
            Ok(Deleted {
                status,
                www_authenticate: www_authenticate.map(|c| secrets.redact(&c).into_owned()),
                dpop_nonce: headers::dpop_nonce(dpop_nonce.as_deref(), &secrets),
            })
        };
        match self.background_timer().timeout(deadline, work).await {
            Some(result) => result.map_err(|e: TransportError| e.finished(&secrets)),
            None => Err(TransportError::new(
                ErrorKind::Timeout,
                Delivery::MaybeSent,
                format!("{at}: no reply within {} ms", deadline.as_millis()),
            )),
        }
    }

    /// Turns a non-success reply into a typed error, reading a bounded prefix of its body.
    pub(crate) async fn status_error(
        &self,
        at: &Place,
        resp: &mut Response<Reply>,
        budget: &mut Budget,
    ) -> TransportError {
        let status = resp.status();
        let www_authenticate = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => resp
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            _ => None,
        };
        // Checked as a nonce here, and for the exchange's secrets where the error leaves
        // the exchange (`TransportError::finished`).
        let dpop_nonce = match status {
            StatusCode::UNAUTHORIZED => resp
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok())
                .and_then(brain_mcp_proto::auth::dpop::nonce)
                .map(str::to_owned),
            _ => None,
        };
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let is_json = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(media::classify)
            == Some(ContentType::Json);
        let cap = self.inner.config.error_body_limit.min(budget.remaining());
        let prefix = body::read_prefix(resp.body_mut(), cap).await;
        let rpc = match prefix {
            Some(bytes) if is_json => crate::rpc::error_of(&bytes),
            _ => None,
        };
        let mut detail = match &rpc {
            Some(error) => format!(" (JSON-RPC {error})"),
            None => String::new(),
        };
        if let Some(challenge) = &www_authenticate {
            detail.push_str(&format!("; WWW-Authenticate: {challenge}"));
        }
        TransportError::new(
            ErrorKind::Status {
                status,
                rpc,
                www_authenticate,
                dpop_nonce,
                retry_after,
            },
            Delivery::Answered,
            format!("{at}: the server answered {status}{detail}"),
        )
    }
}

/// The answer to a session's `DELETE`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Deleted {
    /// The status.
    pub status: StatusCode,
    /// A 401's `WWW-Authenticate`, free of the exchange's secrets.
    pub www_authenticate: Option<String>,
    /// A 401's `DPoP-Nonce` (RFC 9449 §9).
    pub dpop_nonce: Option<String>,
}

pub(crate) fn unexpected(message: String) -> TransportError {
    TransportError::new(ErrorKind::UnexpectedReply, Delivery::Answered, message)
}
