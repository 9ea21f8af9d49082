//! One MCP connection of the conformance client, in either protocol era, on top of
//! `brain-mcp-transport` (HTTP) and `brain-mcp-proto` (messages, `_meta`, headers).

use std::time::Duration;

use brain_mcp_proto::headers::encode_header_str;
use brain_mcp_proto::jsonrpc::{self, ErrorCode, RequestId};
use brain_mcp_proto::mcp::{ClientCapabilities, Implementation, InitializeParams};
use brain_mcp_proto::meta::RequestMetaBuilder;
use brain_mcp_proto::version::{ProtocolVersion, negotiate_handshake};
use brain_mcp_transport::{
    ClientConfig, Expect, HttpClient, McpHeaders, PostRequest, ResumePolicy,
};
use http::Uri;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::error::ClientError;
use super::listen;
use super::responder::Responder;

/// Bytes a server may send back for one request.
pub(super) const BUDGET: usize = 16 << 20;
/// Deadline of one request, server requests and resumption included.
pub(super) const REQUEST_DEADLINE: Duration = Duration::from_secs(20);
/// Retries after a -32022 naming a version we speak.
const VERSION_RETRIES: u32 = 2;

/// Which lifecycle the connection follows.
#[derive(Debug, Clone)]
pub(super) enum Mode {
    /// 2025 revisions: `initialize`, then the negotiated version and session id.
    Handshake {
        version: ProtocolVersion,
        session_id: Option<String>,
    },
    /// 2026-07-28: every request carries its version and capabilities.
    Stateless { version: ProtocolVersion },
}

/// A connected client.
pub(crate) struct Session {
    pub(super) http: HttpClient,
    pub(super) url: Uri,
    pub(super) mode: Mode,
    next_id: i64,
    capabilities: ClientCapabilities,
    info: Implementation,
    pub(super) responder: Box<dyn Responder>,
    /// The handshake-era GET stream, when one is open.
    pub(super) listener: Option<mpsc::Receiver<String>>,
}

impl Session {
    /// Prepares a 2026-era client (no request is sent until the first call).
    pub(crate) fn stateless(
        url: &str,
        capabilities: ClientCapabilities,
        responder: Box<dyn Responder>,
    ) -> Result<Self, ClientError> {
        Self::new(
            url,
            Mode::Stateless {
                version: ProtocolVersion::V2026_07_28,
            },
            capabilities,
            responder,
        )
    }

    /// Opens a handshake-era session: `initialize` offering `offer`, then
    /// `notifications/initialized`.
    pub(crate) async fn handshake(
        url: &str,
        offer: ProtocolVersion,
        capabilities: ClientCapabilities,
        responder: Box<dyn Responder>,
    ) -> Result<Self, ClientError> {
        let mode = Mode::Handshake {
            version: offer,
            session_id: None,
        };
        let mut session = Self::new(url, mode, capabilities, responder)?;
        let params = InitializeParams {
            protocol_version: offer.as_str().to_owned(),
            capabilities: session.capabilities.clone(),
            client_info: session.info.clone(),
            meta: None,
            extra: Map::new(),
        };
        let Ok(Value::Object(params)) = serde_json::to_value(&params) else {
            return Err(ClientError::protocol(
                "initialize",
                "params are not an object",
            ));
        };
        let (result, session_id) = session.exchange("initialize", params, Vec::new()).await?;
        let answered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = negotiate_handshake(answered)
            .map_err(|e| ClientError::protocol("initialize", e.to_string()))?;
        eprintln!("conformance-client: initialized at {version}");
        session.mode = Mode::Handshake {
            version,
            session_id,
        };
        session.notify("notifications/initialized", None).await?;
        let caps = &session.capabilities;
        if caps.elicitation.is_some() || caps.sampling.is_some() || caps.roots.is_some() {
            // Servers may ask for input outside any request, on the GET stream.
            let mut headers = vec![("mcp-protocol-version", version.as_str().to_owned())];
            if let Mode::Handshake {
                session_id: Some(id),
                ..
            } = &session.mode
            {
                headers.push(("mcp-session-id", id.clone()));
            }
            session.listener = listen::open(&session.url, &headers).await?;
        }
        Ok(session)
    }

    fn new(
        url: &str,
        mode: Mode,
        capabilities: ClientCapabilities,
        responder: Box<dyn Responder>,
    ) -> Result<Self, ClientError> {
        let url: Uri = url
            .parse()
            .map_err(|e| ClientError::Usage(format!("the server URL {url:?} is not a URL: {e}")))?;
        let config = ClientConfig {
            default_retry: Duration::from_millis(500),
            max_retry: Duration::from_secs(5),
            ..ClientConfig::default()
        };
        let http = HttpClient::new(config)
            .map_err(|e| ClientError::Usage(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            url,
            mode,
            next_id: 1,
            capabilities,
            info: Implementation::new("brain-conformance-client", env!("CARGO_PKG_VERSION")),
            responder,
            listener: None,
        })
    }

    /// True in the 2026 era.
    pub(crate) fn is_stateless(&self) -> bool {
        matches!(self.mode, Mode::Stateless { .. })
    }

    /// The responder answering user-input requests.
    pub(crate) fn responder(&self) -> &dyn Responder {
        self.responder.as_ref()
    }

    /// Sends a request and returns its result object.
    pub(crate) async fn request(
        &mut self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.request_with_headers(method, params, Vec::new()).await
    }

    /// Sends a request with extra headers (`Mcp-Param-*`) and returns its result.
    pub(crate) async fn request_with_headers(
        &mut self,
        method: &str,
        params: Map<String, Value>,
        extra_headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let mut attempt = 0;
        loop {
            match self
                .exchange(method, params.clone(), extra_headers.clone())
                .await
            {
                Err(ClientError::Rpc { code, .. })
                    if code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0
                        && self.is_stateless()
                        && attempt < VERSION_RETRIES =>
                {
                    // The server does not serve the version this request carried. We
                    // speak only one modern version, so the retry offers it again on a
                    // fresh request id; the bound stops a server that keeps refusing.
                    attempt += 1;
                    eprintln!("conformance-client: {method}: -32022, retrying (attempt {attempt})");
                }
                other => return other.map(|(result, _)| result),
            }
        }
    }

    /// Sends a notification (handshake era only; the 2026 era has none to send).
    pub(crate) async fn notify(
        &mut self,
        method: &str,
        params: Option<Map<String, Value>>,
    ) -> Result<(), ClientError> {
        let body = jsonrpc::encode_notification(method, params.as_ref())
            .map_err(|e| ClientError::protocol(method, e.to_string()))?;
        self.post_accepted(method, body).await
    }

    /// Ends a handshake-era session; failures only get logged.
    pub(crate) async fn close(self) {
        if let Mode::Handshake {
            session_id: Some(id),
            version,
        } = &self.mode
        {
            let headers = McpHeaders {
                protocol_version: Some(version.as_str().to_owned()),
                ..McpHeaders::default()
            };
            if let Err(e) = self
                .http
                .delete_session(&self.url, id, &headers, Duration::from_secs(2))
                .await
            {
                eprintln!("conformance-client: closing the session: {e}");
            }
        }
    }

    /// One request on the wire: returns the result and the reply's session id.
    async fn exchange(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        extra_headers: Vec<(String, String)>,
    ) -> Result<(Value, Option<String>), ClientError> {
        if let Mode::Stateless { version } = &self.mode {
            let meta = RequestMetaBuilder::new(*version, self.capabilities.clone())
                .client_info(self.info.clone())
                .build();
            let Ok(Value::Object(mut meta)) = serde_json::to_value(meta) else {
                return Err(ClientError::protocol(method, "_meta is not an object"));
            };
            if let Some(Value::Object(given)) = params.remove("_meta") {
                meta.extend(given);
            }
            params.insert("_meta".to_owned(), Value::Object(meta));
        }
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let body = jsonrpc::encode_request(&id, method, &params)
            .map_err(|e| ClientError::protocol(method, e.to_string()))?;
        let mut headers = self.headers(method == "initialize");
        if self.is_stateless() {
            headers.method = Some(method.to_owned());
            let name_key = match method {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                _ => None,
            };
            headers.name = name_key
                .and_then(|k| params.get(k))
                .and_then(Value::as_str)
                .map(encode_header_str);
            headers.params = extra_headers;
        }
        let req = PostRequest {
            url: self.url.clone(),
            body: body.into(),
            expect: Expect::Response(id.clone()),
            headers,
            budget: BUDGET,
            resume: match self.mode {
                Mode::Handshake { .. } => ResumePolicy::Handshake { max_attempts: 3 },
                Mode::Stateless { .. } => ResumePolicy::Never,
            },
            idempotent: method != "tools/call",
        };
        let work = self.read_reply(method, req);
        match tokio::time::timeout(REQUEST_DEADLINE, work).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Timeout {
                method: method.to_owned(),
                seconds: REQUEST_DEADLINE.as_secs(),
            }),
        }
    }

    /// The version and session headers of the current mode.
    pub(super) fn headers(&self, initialize: bool) -> McpHeaders {
        match &self.mode {
            Mode::Handshake {
                version,
                session_id,
            } => McpHeaders {
                // No version header on `initialize` itself: nothing is negotiated yet.
                protocol_version: (!initialize && version.uses_version_header())
                    .then(|| version.as_str().to_owned()),
                session_id: session_id.clone(),
                ..McpHeaders::default()
            },
            Mode::Stateless { version } => McpHeaders {
                protocol_version: Some(version.as_str().to_owned()),
                ..McpHeaders::default()
            },
        }
    }
}
