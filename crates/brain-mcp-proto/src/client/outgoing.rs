//! What the core asks a driver to send.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use serde::Serialize;

use crate::jsonrpc::{self, RequestId};
use crate::mcp::methods;
use crate::mcp::{ClientCapabilities, Implementation};

/// One header of a request. Names are lower-case; `sensitive` marks values that must not
/// be logged (a session id is a credential of sorts).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// The header name, lower-case (borrowed for the fixed names, so building a request
    /// allocates only for values that vary).
    pub name: Cow<'static, str>,
    /// The value, ready to send.
    pub value: Cow<'static, str>,
    /// Whether the value must be hidden from logs and `Debug`.
    pub sensitive: bool,
}

impl Header {
    /// A header that may be shown.
    pub fn new(name: impl Into<Cow<'static, str>>, value: impl Into<Cow<'static, str>>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            sensitive: false,
        }
    }

    /// A header whose value must not be shown.
    pub fn sensitive(
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            sensitive: true,
            ..Self::new(name, value)
        }
    }
}

/// Headers whose values `Debug` shows: fixed protocol values, never a peer's choice or a
/// credential (a session id can be a token).
const SHOWN_VALUES: &[&str] = &[
    crate::headers::MCP_PROTOCOL_VERSION,
    crate::headers::MCP_METHOD,
    "accept",
    "content-type",
];

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = !self.sensitive
            && SHOWN_VALUES
                .iter()
                .any(|n| self.name.eq_ignore_ascii_case(n));
        let value = if shown { &self.value } else { "***" };
        write!(f, "{}: {value}", self.name)
    }
}

/// What the reply to a message must be.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expect {
    /// A request: the reply carries the response to this id.
    Response(RequestId),
    /// A notification or a response of ours: `202`, `204` or an empty `200`.
    Accepted,
}

/// One message for the driver to POST.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Outgoing {
    /// The JSON-RPC method (`""` for a response to a server request), for logs and
    /// telemetry.
    pub method: &'static str,
    /// The encoded message.
    pub body: Vec<u8>,
    /// The headers the era asks for (never the bearer token: the driver adds it).
    pub headers: Vec<Header>,
    /// What the reply must be.
    pub expect: Expect,
    /// Whether it has no side effect, so the transport may resend it once on a pooled
    /// connection that turns out to be closed.
    pub idempotent: bool,
    /// How many times a reply stream that breaks before the response may be resumed
    /// (`GET` with `Last-Event-ID`), with [`Self::resume_headers`]; 0 never.
    pub resume_attempts: u32,
    /// The headers of a resuming `GET`.
    pub resume_headers: Vec<Header>,
    /// The progress token the server's notifications for this request carry, if it asks
    /// for progress (a link that routes messages by token registers it).
    pub progress_token: Option<RequestId>,
}

impl Outgoing {
    pub(crate) fn new(
        method: &'static str,
        body: Vec<u8>,
        headers: Vec<Header>,
        expect: Expect,
    ) -> Self {
        Self {
            method,
            body,
            headers,
            expect,
            idempotent: false,
            resume_attempts: 0,
            resume_headers: Vec::new(),
            progress_token: None,
        }
    }
}

/// Who the client is: what it sends as `clientInfo` and the capabilities it declares.
/// Both are also kept as JSON, written once, since every 2026-era request carries them.
#[derive(Clone, Debug)]
pub struct Identity {
    info: Implementation,
    capabilities: ClientCapabilities,
    /// `info` and `capabilities` as JSON, and `initialize` after its id.
    rendered: Arc<Rendered>,
}

/// An identity's JSON, written once.
#[derive(Debug)]
struct Rendered {
    info: Box<RawValue>,
    /// The capabilities a 2026-era `tools/call` declares: these and the tasks extension.
    call_capabilities: Box<RawValue>,
    /// What `initialize` carries after its id (see [`Identity::initialize_after_id`]).
    initialize: Box<[u8]>,
}

impl Identity {
    /// A client named `info` that declares no capability.
    pub fn new(info: Implementation) -> Self {
        Self::of(info, ClientCapabilities::default())
    }

    fn of(info: Implementation, capabilities: ClientCapabilities) -> Self {
        // Both are plain data (strings, maps, flags): writing them cannot fail; `null`
        // stands in should it ever.
        let render = |value: Result<Box<RawValue>, serde_json::Error>| {
            value.unwrap_or_else(|_| RawValue::NULL.to_owned())
        };
        let info_json = render(serde_json::value::to_raw_value(&info));
        let capabilities_json = render(serde_json::value::to_raw_value(&capabilities));
        let mut with_tasks = capabilities.clone();
        with_tasks
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                crate::mcp::TASKS_EXTENSION.to_owned(),
                Value::Object(Map::new()),
            );
        let call_capabilities = render(serde_json::value::to_raw_value(&with_tasks));
        let initialize = initialize_after_id(&info_json, &capabilities_json);
        let rendered = Arc::new(Rendered {
            info: info_json,
            call_capabilities,
            initialize,
        });
        Self {
            info,
            capabilities,
            rendered,
        }
    }

    /// The same client declaring `capabilities`.
    #[must_use]
    pub fn with_capabilities(self, capabilities: ClientCapabilities) -> Self {
        Self::of(self.info, capabilities)
    }

    /// `clientInfo`.
    pub fn info(&self) -> &Implementation {
        &self.info
    }

    /// The declared capabilities (none, for a client that answers no server request).
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// `clientInfo` as JSON, written when the identity was made.
    pub(crate) fn info_json(&self) -> &RawValue {
        &self.rendered.info
    }

    /// The capabilities a 2026-era `tools/call` declares, as JSON: the declared ones and
    /// the tasks extension (the client follows a task whichever call the server makes
    /// one).
    pub(crate) fn call_capabilities_json(&self) -> &RawValue {
        &self.rendered.call_capabilities
    }

    /// `initialize`'s method and params, as written after its id, when the identity was
    /// made: every handshake-era session sends the same ones.
    pub(crate) fn initialize_after_id(&self) -> &[u8] {
        &self.rendered.initialize
    }

    /// Whether the client declared it can answer requests for user input.
    pub fn answers_input(&self) -> bool {
        let c = &self.capabilities;
        c.elicitation.is_some() || c.sampling.is_some() || c.roots.is_some()
    }
}

/// `InitializeParams` with the identity already written as JSON.
#[derive(Serialize)]
struct Initialize<'a> {
    #[serde(rename = "protocolVersion")]
    protocol_version: &'a str,
    capabilities: &'a RawValue,
    #[serde(rename = "clientInfo")]
    client_info: &'a RawValue,
}

/// `initialize`'s method and `InitializeParams` (offering the newest handshake-era
/// revision, the handshake's `OFFERED`) for an identity whose `clientInfo` and
/// capabilities are `info` and `capabilities`, as written after the request's id.
fn initialize_after_id(info: &RawValue, capabilities: &RawValue) -> Box<[u8]> {
    let params = Initialize {
        protocol_version: crate::version::LATEST_HANDSHAKE.as_str(),
        capabilities,
        client_info: info,
    };
    // Raw JSON and a version string: writing them cannot fail.
    jsonrpc::request_after_id(methods::INITIALIZE, &params).unwrap_or_default()
}
