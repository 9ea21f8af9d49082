//! The raw floor: a plain pooled hyper client sending the requests our client sent,
//! recorded byte for byte. It reads every reply to its end and carries the session id from
//! the `initialize` reply; it parses no JSON. Like ours, it sends the session DELETE in
//! the background, so callers see the result after the `tools/call`.
//!
//! The `json` side is the same client doing the least JSON work an MCP client must: it
//! writes each request body from a JSON value (built once, from the recording) and
//! parses each reply (each SSE event's data) into a value whose JSON-RPC envelope it
//! checks. No schema, no typed model, no limits: a second floor, for the protocol's work.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde_json::Value;
use tokio_util::task::TaskTracker;

use crate::plan::Captured;

const SESSION: &str = "mcp-session-id";

/// A pooled hyper client (HTTP/1.1 and h2 by ALPN) bound to one endpoint and one plan.
pub(crate) struct Raw {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: Uri,
    steps: Vec<Captured>,
    /// The request bodies as JSON values, for the `json` side; `None` for the raw one.
    values: Option<Vec<Option<Value>>>,
    background: TaskTracker,
}

/// rustls with ring, trusting only `ca_pem` (nothing when `None`: plain http only).
pub(crate) fn tls_config(ca_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.unwrap_or_default()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl Raw {
    /// A client for `url` replaying `steps` (one call's requests, in order); with `json`,
    /// the `json` side (see the module docs).
    pub(crate) fn new(
        url: &str,
        steps: Vec<Captured>,
        ca_pem: Option<&[u8]>,
        json: bool,
    ) -> Result<Self, String> {
        let values = json
            .then(|| {
                let parse = |step: &Captured| {
                    (!step.body.is_empty())
                        .then(|| serde_json::from_slice(&step.body))
                        .transpose()
                };
                steps.iter().map(parse).collect::<Result<Vec<_>, _>>()
            })
            .transpose()
            .map_err(|e| format!("recorded request: {e}"))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(ca_pem)?)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build(https);
        Ok(Self {
            client,
            url: url.parse().map_err(|e| format!("{url}: {e}"))?,
            steps,
            values,
            background: TaskTracker::new(),
        })
    }

    /// One call: its exchanges in order, the DELETE (if any) in the background.
    pub(crate) async fn call(self: Arc<Self>) -> Result<(), String> {
        if self.steps.len() == 1 {
            return self.send(0, None).await.map(drop);
        }
        let session = self
            .send(0, None)
            .await?
            .ok_or("the initialize reply carries no session id")?;
        self.send(1, Some(&session)).await?;
        self.send(2, Some(&session)).await?;
        let this = self.clone();
        self.background.spawn(async move {
            let _ = this.send(3, Some(&session)).await;
        });
        Ok(())
    }

    /// Waits for the background DELETEs.
    pub(crate) async fn finish(&self) {
        self.background.close();
        self.background.wait().await;
    }

    /// Sends step `i` (with `session` in place of the recorded session id), reads the
    /// reply to its end; returns the reply's session id header.
    async fn send(
        &self,
        i: usize,
        session: Option<&HeaderValue>,
    ) -> Result<Option<HeaderValue>, String> {
        let step = &self.steps[i];
        let mut builder = Request::builder()
            .method(step.method.clone())
            .uri(self.url.clone());
        for (name, value) in &step.headers {
            if name == HOST || name == CONTENT_LENGTH {
                continue; // hyper writes these itself, as it did for our client
            }
            match session {
                Some(s) if name == SESSION => builder = builder.header(name, s),
                _ => builder = builder.header(name, value),
            }
        }
        let body = match self.values.as_ref().and_then(|v| v[i].as_ref()) {
            Some(value) => Bytes::from(serde_json::to_vec(value).map_err(|e| e.to_string())?),
            None => step.body.clone(),
        };
        let request = builder.body(Full::new(body)).map_err(|e| e.to_string())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| format!("{e:?}"))?;
        if !response.status().is_success() {
            return Err(format!("{} answered {}", step.role(), response.status()));
        }
        let session = response.headers().get(SESSION).cloned();
        let events = response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if self.values.is_some() {
            check_reply(&body, events).map_err(|e| format!("{} reply: {e}", step.role()))?;
        }
        Ok(session)
    }
}

/// Parses a reply body (each event's `data` when `events`) and checks the JSON-RPC
/// envelope of every message in it.
fn check_reply(body: &[u8], events: bool) -> Result<(), String> {
    let envelope = |json: &[u8]| -> Result<(), String> {
        let message: Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let answered = message.get("result").is_some() || message.get("error").is_some();
        match message.get("jsonrpc") {
            Some(v) if v == "2.0" && (answered || message.get("method").is_some()) => Ok(()),
            _ => Err("not a JSON-RPC 2.0 message".into()),
        }
    };
    if !events {
        return if body.is_empty() {
            Ok(())
        } else {
            envelope(body)
        };
    }
    for line in body.split(|&b| b == b'\n') {
        if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.strip_prefix(b" ").unwrap_or(data);
            let data = data.strip_suffix(b"\r").unwrap_or(data);
            if !data.is_empty() {
                envelope(data)?;
            }
        }
    }
    Ok(())
}
