//! Small exchanges outside MCP: the metadata documents and token requests of
//! authorization. Each has a byte bound and a deadline, follows no redirect (a redirect
//! is returned as the answer, its `Location` read by the caller), and removes its
//! secrets from every error and log line, as a POST does.

use std::time::Duration;

use brain_mcp_proto::client::Header;
use brain_mcp_proto::text::Secrets;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use http::{Method, Uri};

use crate::body::{self, Budget};
use crate::client::{HttpClient, Outgoing, place};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::headers;
use crate::observe::ExchangeLog;

/// The longest `Location` or `WWW-Authenticate` value kept from an answer.
const HEADER_LIMIT: usize = 8 * 1024;

/// A GET of a document or a POST of a form or JSON body.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FetchRequest {
    /// `GET` or `POST`.
    pub method: Method,
    /// Where.
    pub url: Uri,
    /// Extra headers (an `Authorization: Basic` one is marked sensitive by its maker).
    pub headers: Vec<Header>,
    /// The body and its content type, for a POST.
    pub body: Option<(&'static str, Bytes)>,
    /// Secrets to remove from every error and log line (the proxy's are always removed).
    pub secrets: Secrets,
    /// The most bytes of body read; more is an error.
    pub limit: usize,
    /// The whole exchange's deadline.
    pub deadline: Duration,
}

impl FetchRequest {
    /// A GET of `url` accepting JSON, 64 KiB at most, within `deadline`.
    pub fn get(url: Uri, deadline: Duration) -> Self {
        Self {
            method: Method::GET,
            url,
            headers: Vec::new(),
            body: None,
            secrets: Secrets::none(),
            limit: 64 * 1024,
            deadline,
        }
    }

    /// A POST of `body` (of `content_type`) to `url`, 64 KiB of answer at most.
    pub fn post(url: Uri, content_type: &'static str, body: Bytes, deadline: Duration) -> Self {
        Self {
            method: Method::POST,
            body: Some((content_type, body)),
            ..Self::get(url, deadline)
        }
    }
}

/// What came back.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Fetched {
    /// The HTTP status.
    pub status: u16,
    /// `Location`, for a redirect.
    pub location: Option<String>,
    /// `WWW-Authenticate`, if any.
    pub www_authenticate: Option<String>,
    /// The body, within the request's limit.
    pub body: Bytes,
}

impl HttpClient {
    /// Sends `req` and reads its answer whole, whatever the status.
    pub async fn fetch(&self, req: FetchRequest) -> Result<Fetched, TransportError> {
        let secrets = self.proxy_secrets().union(&req.secrets);
        let at = place(&req.method, &req.url);
        let deadline = req.deadline;
        let work = self.fetch_unredacted(req, &secrets);
        match self.background_timer().timeout(deadline, work).await {
            Some(result) => result.map_err(|e| e.finished(&secrets)),
            None => Err(TransportError::new(
                ErrorKind::Timeout,
                Delivery::MaybeSent,
                format!("{at}: no answer within {} ms", deadline.as_millis()),
            )),
        }
    }

    async fn fetch_unredacted(
        &self,
        req: FetchRequest,
        secrets: &Secrets,
    ) -> Result<Fetched, TransportError> {
        let content_type = req.body.as_ref().map(|(t, _)| *t);
        let build = || -> Result<HeaderMap, TransportError> {
            let mut map = HeaderMap::new();
            headers::apply(&req.headers, None, &mut map)?;
            map.insert(ACCEPT, HeaderValue::from_static("application/json"));
            if let Some(t) = content_type {
                map.insert(CONTENT_TYPE, HeaderValue::from_static(t));
            }
            Ok(map)
        };
        let log_method = if req.method == Method::POST {
            "POST"
        } else {
            "GET"
        };
        let mut log = ExchangeLog::start(log_method, secrets.clone());
        let out = Outgoing {
            idempotent: req.method == Method::GET,
            method: req.method.clone(),
            url: req.url.clone(),
            headers: &build,
            body: req.body.map(|(_, b)| b).unwrap_or_default(),
            background: false,
            follow: false,
        };
        let (mut resp, _busy) = self.send(out, &mut log).await?;
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .map(|v| brain_mcp_proto::text::prefix(v, HEADER_LIMIT).to_owned())
        };
        let location = header(LOCATION);
        let www_authenticate = header(WWW_AUTHENTICATE);
        let status = resp.status().as_u16();
        let mut budget = Budget::new(req.limit);
        let body = body::read_all(resp.body_mut(), &mut budget).await?;
        log.end("ok");
        Ok(Fetched {
            status,
            location,
            www_authenticate,
            body,
        })
    }
}
