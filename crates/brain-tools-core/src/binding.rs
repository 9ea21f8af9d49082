//! A validated tool binding: how one tool is offered to the model and how it is reached.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::oauth::OAuthConfig;
use crate::schema::{CompiledSchema, Violations};
use crate::url::EndpointUrl;

/// One tool as the host config declares it, checked and with its schemas compiled.
///
/// Obtain bindings from [`crate::HostConfig`] or [`Binding::from_value`]; both check every
/// rule of the config format (see `docs/config.md`), so a `Binding` always holds: a valid
/// name, an object input schema that compiled, an [`Endpoint`] whose MCP part has both its
/// URL and its tool, tenants, and limits in range. Fields are read through accessors.
#[derive(Clone)]
pub struct Binding {
    pub(crate) name: Arc<str>,
    pub(crate) description: String,
    pub(crate) input_schema: Arc<Value>,
    pub(crate) endpoint: Endpoint,
    pub(crate) token_env: Option<String>,
    pub(crate) tenants: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) max_output_bytes: usize,
    pub(crate) output_schema: Option<Arc<Value>>,
    pub(crate) input_validator: CompiledSchema,
    pub(crate) output_validator: Option<CompiledSchema>,
    /// Extra headers sent on every request to the server, as written.
    pub(crate) headers: Vec<(String, String)>,
    /// OAuth client credentials, instead of `token_env`.
    pub(crate) oauth: Option<OAuthConfig>,
    /// The most calls in flight to the binding's server (one limit per server).
    pub(crate) max_in_flight: Option<u32>,
}

/// Where a binding's tool is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// A tool on an MCP server (the binding has `mcp_tool`).
    Mcp(McpEndpoint),
    /// An HTTP or SSE tool, whose executor is the host's business.
    Http(HttpEndpoint),
}

/// An MCP binding's server and tool, always together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpEndpoint {
    pub(crate) url: EndpointUrl,
    pub(crate) tool: String,
    pub(crate) task_support: TaskSupport,
}

/// Whether an MCP tool runs as a task (long work the client polls for), as discovery
/// recorded it in the binding's `task_support`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool never runs as a task (no `task_support` in the binding).
    #[default]
    Forbidden,
    /// The tool may run as a task.
    Optional,
    /// The tool runs only as a task.
    Required,
}

impl TaskSupport {
    /// The config's spelling (`"optional"`, `"required"`); `None` for forbidden, which the
    /// config writes by leaving the field out.
    pub fn as_config(self) -> Option<&'static str> {
        match self {
            Self::Forbidden => None,
            Self::Optional => Some("optional"),
            Self::Required => Some("required"),
        }
    }
}

impl McpEndpoint {
    /// The server's MCP endpoint.
    pub fn url(&self) -> &EndpointUrl {
        &self.url
    }

    /// The tool's name on the server.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Whether the tool runs as a task.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }
}

/// An HTTP or SSE tool's URL (when it has one) and whether it receives a session
/// inspection token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpEndpoint {
    pub(crate) url: Option<EndpointUrl>,
    pub(crate) inspect_session: bool,
}

impl HttpEndpoint {
    /// The tool's URL, when the config gives one.
    pub fn url(&self) -> Option<&EndpointUrl> {
        self.url.as_ref()
    }

    /// Whether the tool receives a session inspection token.
    pub fn inspect_session(&self) -> bool {
        self.inspect_session
    }
}

impl Binding {
    /// The name the model sees.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description the model sees.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments (always a `"type": "object"` schema).
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// Where the tool is reached.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The MCP server and tool, on an MCP binding.
    pub fn mcp(&self) -> Option<&McpEndpoint> {
        match &self.endpoint {
            Endpoint::Mcp(mcp) => Some(mcp),
            Endpoint::Http(_) => None,
        }
    }

    /// The endpoint URL as written in the config, when the binding has one.
    pub fn url(&self) -> Option<&str> {
        match &self.endpoint {
            Endpoint::Mcp(mcp) => Some(mcp.url.as_str()),
            Endpoint::Http(http) => http.url.as_ref().map(EndpointUrl::as_str),
        }
    }

    /// The environment variable holding the bearer token, if the tool needs one.
    pub fn token_env(&self) -> Option<&str> {
        self.token_env.as_deref()
    }

    /// The environment variable holding the binding's secret, if any: `token_env`, or the
    /// `oauth` block's client secret or key.
    pub fn secret_env(&self) -> Option<&str> {
        self.token_env()
            .or_else(|| self.oauth.as_ref().and_then(|o| o.secret().env_var()))
    }

    /// The OAuth client credentials (`oauth`), if the server wants a token from an
    /// authorization server rather than a static key. Never set with `token_env`.
    pub fn oauth(&self) -> Option<&OAuthConfig> {
        self.oauth.as_ref()
    }

    /// The most calls in flight to this binding's server, if limited (`max_in_flight`):
    /// one limit per server, shared by every binding of it. A call waits for a slot within
    /// its deadline.
    pub fn max_in_flight(&self) -> Option<u32> {
        self.max_in_flight
    }

    /// The tenants that may call the tool; never empty.
    pub fn tenants(&self) -> &[String] {
        &self.tenants
    }

    /// The limit on the whole call (`timeout_seconds`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The largest result accepted, in bytes (`max_output_bytes`).
    pub fn max_output_bytes(&self) -> usize {
        self.max_output_bytes
    }

    /// The JSON Schema successful structured results must match, if any.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_deref()
    }

    /// The extra headers sent on every request to the tool's server (`headers`): static,
    /// non-secret values whose names the client does not set itself (see
    /// [`check_headers`](crate::check_headers)). Empty when the binding has none.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Whether the tool receives a session inspection token (never on MCP bindings).
    pub fn inspect_session(&self) -> bool {
        matches!(&self.endpoint, Endpoint::Http(http) if http.inspect_session)
    }

    /// Whether this is an MCP binding (`mcp_tool` is set).
    pub fn is_mcp(&self) -> bool {
        matches!(self.endpoint, Endpoint::Mcp(_))
    }

    /// Whether `tenant` may call this tool. Tenants compare exactly; there are no wildcards.
    pub fn allows_tenant(&self, tenant: &str) -> bool {
        self.tenants.iter().any(|allowed| allowed == tenant)
    }

    /// Checks arguments against `input_schema` with the precompiled validator.
    pub fn validate_arguments(&self, arguments: &Value) -> Result<(), Violations> {
        self.input_validator.validate(arguments)
    }

    /// Checks a structured result against `output_schema`; `Ok` when there is none.
    pub fn validate_output(&self, structured: &Value) -> Result<(), Violations> {
        match &self.output_validator {
            Some(validator) => validator.validate(structured),
            None => Ok(()),
        }
    }

    /// The compiled input validator.
    pub fn input_validator(&self) -> &CompiledSchema {
        &self.input_validator
    }

    /// The compiled output validator, when the binding has an `output_schema`.
    pub fn output_validator(&self) -> Option<&CompiledSchema> {
        self.output_validator.as_ref()
    }

    /// The binding in config form (`timeout_seconds`, defaults written out), which loads
    /// back into an equal binding.
    pub fn to_value(&self) -> Value {
        #[derive(Serialize)]
        struct Form<'a> {
            name: &'a str,
            description: &'a str,
            input_schema: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            url: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            mcp_tool: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            token_env: Option<&'a str>,
            tenants: &'a [String],
            timeout_seconds: u64,
            max_output_bytes: usize,
            #[serde(skip_serializing_if = "Option::is_none")]
            output_schema: Option<&'a Value>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            inspect_session: bool,
            #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
            headers: serde_json::Map<String, Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            oauth: Option<Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            max_in_flight: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            task_support: Option<&'static str>,
        }
        let form = Form {
            name: &self.name,
            description: &self.description,
            input_schema: &self.input_schema,
            url: self.url(),
            mcp_tool: self.mcp().map(McpEndpoint::tool),
            token_env: self.token_env.as_deref(),
            tenants: &self.tenants,
            timeout_seconds: self.timeout.as_secs(),
            max_output_bytes: self.max_output_bytes,
            output_schema: self.output_schema.as_deref(),
            inspect_session: self.inspect_session(),
            headers: self
                .headers
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect(),
            oauth: self.oauth.as_ref().map(OAuthConfig::to_value),
            max_in_flight: self.max_in_flight,
            task_support: self.mcp().and_then(|mcp| mcp.task_support().as_config()),
        };
        serde_json::to_value(form).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("token_env", &self.token_env)
            .field("oauth", &self.oauth)
            .field("tenants", &self.tenants)
            .field("timeout", &self.timeout)
            .field("max_output_bytes", &self.max_output_bytes)
            .field("has_output_schema", &self.output_schema.is_some())
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl PartialEq for Binding {
    /// Bindings are equal when their config forms are; validators follow from the schemas.
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}
