//! The raw floor: a plain pooled hyper client sending the requests our client sent,
//! recorded byte for byte. It reads every reply to its end and carries the session id from
//! the `initialize` reply; it parses no JSON. Like ours, it sends the session DELETE in
//! the background, so callers see the result after the `tools/call`.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio_util::task::TaskTracker;

use crate::plan::Captured;

const SESSION: &str = "mcp-session-id";

/// A pooled hyper client (HTTP/1.1 and h2 by ALPN) bound to one endpoint and one plan.
pub(crate) struct Raw {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: Uri,
    steps: Vec<Captured>,
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
    /// A client for `url` replaying `steps` (one call's requests, in order).
    pub(crate) fn new(
        url: &str,
        steps: Vec<Captured>,
        ca_pem: Option<&[u8]>,
    ) -> Result<Self, String> {
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
        let request = builder
            .body(Full::new(step.body.clone()))
            .map_err(|e| e.to_string())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| format!("{e:?}"))?;
        if !response.status().is_success() {
            return Err(format!("{} answered {}", step.role(), response.status()));
        }
        let session = response.headers().get(SESSION).cloned();
        response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        Ok(session)
    }
}
