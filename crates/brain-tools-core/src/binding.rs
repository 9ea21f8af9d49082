//! A validated tool binding: how one tool is offered to the model and how it is reached.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::config::{self, ConfigErrors};
use crate::schema::{CompiledSchema, Violations};

/// One tool as the host config declares it, checked and with its schemas compiled.
///
/// Obtain bindings from [`crate::HostConfig`] or [`Binding::from_value`]; both check every
/// rule of the config format (see `docs/config.md`).
#[derive(Clone)]
pub struct Binding {
    /// The name the model sees.
    pub name: String,
    /// The description the model sees.
    pub description: String,
    /// JSON Schema for the arguments; always a `"type": "object"` schema. Bindings
    /// loaded together with equal schemas share one copy.
    pub input_schema: Arc<Value>,
    /// The tool's endpoint. Always present on an MCP binding.
    pub url: Option<String>,
    /// The tool's name on the MCP server; present exactly on MCP bindings.
    pub mcp_tool: Option<String>,
    /// The environment variable that holds the bearer token, if the tool needs one.
    pub token_env: Option<String>,
    /// The tenants that may call the tool; never empty.
    pub tenants: Vec<String>,
    /// The limit on the whole call (`timeout_seconds`, default 300).
    pub timeout: Duration,
    /// The largest result accepted, in bytes of its JSON (default 1 MiB).
    pub max_output_bytes: usize,
    /// JSON Schema that successful structured results must match (shared like
    /// `input_schema`).
    pub output_schema: Option<Arc<Value>>,
    /// Whether the tool receives a session inspection token (never on MCP bindings).
    pub inspect_session: bool,
    pub(crate) input_validator: CompiledSchema,
    pub(crate) output_validator: Option<CompiledSchema>,
}

impl Binding {
    /// Checks and compiles one binding given as JSON (one element of the `tools` array).
    /// Error paths are relative to the binding, such as `timeout_seconds`.
    pub fn from_value(value: &Value) -> Result<Self, ConfigErrors> {
        config::parse_single_binding(value)
    }

    /// Whether this is an MCP binding (`mcp_tool` is set).
    pub fn is_mcp(&self) -> bool {
        self.mcp_tool.is_some()
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
        }
        let form = Form {
            name: &self.name,
            description: &self.description,
            input_schema: &self.input_schema,
            url: self.url.as_deref(),
            mcp_tool: self.mcp_tool.as_deref(),
            token_env: self.token_env.as_deref(),
            tenants: &self.tenants,
            timeout_seconds: self.timeout.as_secs(),
            max_output_bytes: self.max_output_bytes,
            output_schema: self.output_schema.as_deref(),
            inspect_session: self.inspect_session,
        };
        serde_json::to_value(form).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("mcp_tool", &self.mcp_tool)
            .field("token_env", &self.token_env)
            .field("tenants", &self.tenants)
            .field("timeout", &self.timeout)
            .field("max_output_bytes", &self.max_output_bytes)
            .field("has_output_schema", &self.output_schema.is_some())
            .field("inspect_session", &self.inspect_session)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Binding {
    /// Bindings are equal when their config forms are; validators follow from the schemas.
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}
