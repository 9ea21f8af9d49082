//! Small exchanges outside MCP: the metadata documents and token requests of
//! authorization. Each has a byte bound and a deadline, follows no redirect (a redirect
//! is returned as the answer, its `Location` read by the caller), and removes its
//! secrets from every error and log line, as a POST does.
//!
//! A fetch of a URL a peer named carries the server's [`Destinations`]: it reaches only
//! the addresses the rule allows, over a connection of its own (see `reach.rs`).

use crate::headers::DPOP_NONCE;
use std::time::Duration;

use brain_mcp_proto::auth::reach::Destinations;
use brain_mcp_proto::client::Header;
use brain_mcp_proto::text::Secrets;
use bytes::Bytes;
use http::header::USER_AGENT;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use http::{Method, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;

use crate::body::{self, Budget};
use crate::client::{HttpClient, Outgoing, classify, place};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::headers;
use crate::observe::ExchangeLog;
use crate::pool::Reply;
use crate::pool::conn::{self, Info};
use crate::reach::{Checked, Fixed};

/// The longest `Location` or `WWW-Authenticate` value kept from an answer.
const HEADER_LIMIT: usize = 8 * 1024;

/// A GET of a document or a POST of a form or JSON body. Its `Debug` shows the method,
/// the URL's origin, the header names and the body's size: the path, query and body may
/// hold secrets (a token request's form).
#[derive(Clone)]
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
    /// For a URL a peer named: the addresses it may reach, checked on the addresses
    /// actually connected to (a fresh connection, never a pooled one). `None` for a URL
    /// the operator or the caller chose, which goes as any request.
    pub destinations: Option<Destinations>,
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
            destinations: None,
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
/// Its `Debug` shows the status and sizes: a token response's body and a redirect's
/// `Location` hold secrets.
#[derive(Clone)]
#[non_exhaustive]
pub struct Fetched {
    /// The HTTP status.
    pub status: u16,
    /// `Location`, for a redirect.
    pub location: Option<String>,
    /// `WWW-Authenticate`, if any.
    pub www_authenticate: Option<String>,
    /// `DPoP-Nonce` (RFC 9449 §8), if any: a value the server wants in the next proof.
    pub dpop_nonce: Option<String>,
    /// The body, within the request's limit.
    pub body: Bytes,
}

impl std::fmt::Debug for FetchRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchRequest")
            .field("method", &self.method)
            .field("origin", &crate::origin::origin(&self.url))
            .field("headers", &self.headers)
            .field("body_bytes", &self.body.as_ref().map(|(_, b)| b.len()))
            .field("limit", &self.limit)
            .field("deadline", &self.deadline)
            .field("destinations", &self.destinations)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetched")
            .field("status", &self.status)
            .field("location", &self.location.as_ref().map(|_| "***"))
            .field("body_bytes", &self.body.len())
            .finish_non_exhaustive()
    }
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
        let checked = match &req.destinations {
            Some(destinations) => {
                let at = place(&req.method, &req.url);
                match self.checked(destinations, &req.url, &at).await {
                    Ok(checked) => Some(checked),
                    Err(e) => {
                        log.end(e.kind_name());
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        let mut resp = match checked {
            Some(Checked::Direct(connector)) => self
                .send_fresh(connector, out, &mut log)
                .await?
                .map(|body| Reply::new(body, None)),
            Some(Checked::Proxied) | None => self.send(out, &mut log).await?,
        };
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .map(|v| brain_mcp_proto::text::prefix(v, HEADER_LIMIT).to_owned())
        };
        let location = header(LOCATION);
        let www_authenticate = header(WWW_AUTHENTICATE);
        let dpop_nonce = headers::dpop_nonce(
            header(http::HeaderName::from_static(DPOP_NONCE)).as_deref(),
            secrets,
        );
        let status = resp.status().as_u16();
        let mut budget = Budget::new(req.limit);
        let body = body::read_all(resp.body_mut(), &mut budget).await?;
        log.bytes(body.len());
        log.end("ok");
        Ok(Fetched {
            status,
            location,
            www_authenticate,
            dpop_nonce,
            body,
        })
    }

    /// Sends `out` over a connection opened for it alone by `connector` (which reaches
    /// only the addresses the destination rule kept) and closed after the answer: the
    /// request never takes a pooled connection, and leaves none in the pool.
    async fn send_fresh(
        &self,
        connector: HttpConnector<Fixed>,
        out: Outgoing<'_>,
        log: &mut ExchangeLog,
    ) -> Result<Response<Incoming>, TransportError> {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(self.inner.tls.clone())
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(connector);
        let mut req = Request::new(Full::new(out.body));
        *req.method_mut() = out.method.clone();
        *req.uri_mut() = out.url.clone();
        *req.headers_mut() = (out.headers)()?;
        if let Some(ua) = &self.inner.user_agent {
            req.headers_mut()
                .entry(USER_AGENT)
                .or_insert_with(|| ua.clone());
        }
        let limit = self.inner.config.connect_timeout.saturating_mul(2);
        let sent = async {
            // The connection closes once the answer is read: its sender goes with this
            // future, and hyper ends a connection whose senders are gone.
            let mut opened = conn::open(https, out.url.clone(), limit).await?;
            tokio::spawn(opened.driver);
            let info = Info {
                id: 0,
                proxied: false,
                used: None,
                host: conn::host_header(&out.url),
                counted: Default::default(),
            };
            conn::send(&mut opened.sender, &info, req).await
        };
        match sent.await {
            Ok(resp) => {
                log.response(&resp);
                Ok(resp)
            }
            Err(err) => {
                let err = classify(err, &out.method, &out.url);
                log.end(err.kind_name());
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use brain_mcp_proto::auth::reach::AddrClass;

    use super::*;
    use crate::{ClientConfig, ProxyConfig};

    fn client() -> HttpClient {
        HttpClient::new(ClientConfig::default().with_proxy(ProxyConfig::none())).unwrap()
    }

    fn get(url: &str, destinations: Option<Destinations>) -> FetchRequest {
        let mut req = FetchRequest::get(url.parse().unwrap(), Duration::from_secs(5));
        req.destinations = destinations;
        req
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_for_a_public_server() {
        let (port, accepted) = brain_tests::counting::counting_listener().await;
        let http = client();
        let public = Destinations::new(AddrClass::Public, true);
        for url in [
            format!("http://evil.localhost:{port}/.well-known/x?y=1"),
            format!("http://127.0.0.1:{port}/token"),
            format!("http://[::ffff:127.0.0.1]:{port}/token"),
        ] {
            let err = http.fetch(get(&url, Some(public))).await.unwrap_err();
            assert!(err.is_destination(), "{url}: {err}");
            assert_eq!(err.delivery(), Delivery::NotSent, "{url}");
            assert!(err.to_string().contains("loopback"), "{err}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "nothing was sent");
        // The same name without the rule (a URL the operator chose) is fetched.
        let url = format!("http://evil.localhost:{port}/x");
        assert_eq!(http.fetch(get(&url, None)).await.unwrap().status, 200);
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_loopback_server_reaches_loopback_on_a_connection_of_its_own() {
        let (port, accepted) = brain_tests::counting::counting_listener().await;
        let http = client();
        let url = format!("http://localhost:{port}/metadata");
        // An unchecked fetch leaves a connection in the pool...
        assert_eq!(http.fetch(get(&url, None)).await.unwrap().status, 200);
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
        assert_eq!(http.fetch(get(&url, None)).await.unwrap().status, 200);
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "pooled");
        // ...which a checked fetch never takes: it connects afresh, each time.
        let local = Some(Destinations::new(AddrClass::Loopback, false));
        for expected in [2, 3] {
            let got = http.fetch(get(&url, local)).await.unwrap();
            assert_eq!((got.status, got.body.as_ref()), (200, b"{}".as_ref()));
            assert_eq!(accepted.load(Ordering::SeqCst), expected);
        }
    }

    #[tokio::test]
    async fn a_private_server_does_not_reach_loopback_even_when_private_is_allowed() {
        let (port, accepted) = brain_tests::counting::counting_listener().await;
        let http = client();
        let private = Some(Destinations::new(AddrClass::Private, true));
        let url = format!("http://127.0.0.1:{port}/x");
        let err = http.fetch(get(&url, private)).await.unwrap_err();
        assert!(err.is_destination());
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn the_server_class_comes_from_its_url() {
        let http = client();
        let class = |u: &'static str| http.server_class(&u.parse().unwrap());
        assert_eq!(class("http://127.0.0.1:9/mcp"), AddrClass::Loopback);
        assert_eq!(class("http://[::1]:9/mcp"), AddrClass::Loopback);
        assert_eq!(class("http://mcp.localhost:9/mcp"), AddrClass::Loopback);
        assert_eq!(class("https://10.1.2.3/mcp"), AddrClass::Private);
        assert_eq!(class("https://8.8.8.8/mcp"), AddrClass::Public);
        // A name is public whatever it resolves to: its DNS is the server's to answer.
        assert_eq!(class("https://no-such-host.invalid/mcp"), AddrClass::Public);
        assert_eq!(
            class("http://127.0.0.1.nip.example:9/mcp"),
            AddrClass::Public
        );
    }
}
