//! What discovery is asked and what it answers: the request, the bindings it builds,
//! the listing, and the bounds that apply.

use std::time::Duration;

use brain_mcp_proto::client::Era;
use brain_mcp_proto::mcp::Tool;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::auth::OAuthClient;

/// The default bound on a whole discovery: connect, handshake and every page.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);
/// The most tool names one discovery may ask for.
pub const MAX_TOOLS: usize = 128;
/// The most `tools/list` pages read before giving up on a server that keeps paginating.
pub const MAX_PAGES: usize = crate::driver::MAX_PAGES;
/// Default `timeout_seconds` of a printed binding.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
/// Default `max_output_bytes` of a printed binding.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1_048_576;
/// The most tools [`list`](super::list) returns.
pub const MAX_LISTED: usize = super::pages::MAX_LISTED;

/// What to discover.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Request {
    /// The server's MCP endpoint.
    pub url: String,
    /// The environment variable holding the server's API key, if it needs one.
    pub token_env: Option<String>,
    /// OAuth client credentials, instead of `token_env`: a token is got when the server
    /// asks for one, and the bindings carry an `oauth` block naming the issuer used.
    pub oauth: Option<OAuthClient>,
    /// The tenant the bindings allow.
    pub tenant: String,
    /// The remote tool names to bind, in output order.
    pub tools: Vec<String>,
    /// The bound on the whole discovery.
    pub deadline: Duration,
}

impl Request {
    /// Discovery of `tools` at `url` for `tenant`, without a token, within 30 s.
    pub fn new(url: impl Into<String>, tenant: impl Into<String>, tools: Vec<String>) -> Self {
        Self {
            url: url.into(),
            token_env: None,
            oauth: None,
            tenant: tenant.into(),
            tools,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// One printed binding, its fields in the order the product documents them.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct DiscoveredBinding {
    /// The name the model sees (the remote name; rename it in the config to avoid collisions).
    pub name: String,
    /// The tool's description, as the server sent it.
    pub description: String,
    /// The input schema, byte for byte as the server sent it.
    pub input_schema: Box<RawValue>,
    /// The endpoint.
    pub url: String,
    /// The remote tool name.
    pub mcp_tool: String,
    /// The token variable, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The OAuth block (config form), when credentials were given and the server asked
    /// for a token: it names the issuer that granted it, for the operator to review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<serde_json::Value>,
    /// The one tenant allowed.
    pub tenants: Vec<String>,
    /// The default deadline.
    pub timeout_seconds: u64,
    /// The default output limit.
    pub max_output_bytes: u64,
    /// The output schema, when the tool has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Box<RawValue>>,
    /// `"optional"` or `"required"` when the tool may or must run as a task
    /// (`execution.taskSupport`); absent when it never does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_support: Option<&'static str>,
}

/// The outcome of a discovery that worked: the bindings and any warnings for stderr.
#[derive(Debug)]
#[non_exhaustive]
pub struct Discovered {
    /// One binding per named tool, in the order named.
    pub bindings: Vec<DiscoveredBinding>,
    /// Notes for the operator (for example tools not offered because of invalid headers).
    pub warnings: Vec<String>,
    /// The era the server speaks.
    pub era: Era,
    /// `bindings` as the pretty JSON array `mcp-tools` prints; it loads as the `tools` of
    /// a host config unchanged (discovery checked it with the host's loader).
    pub json: String,
}

/// Every tool a server offers, as it lists them.
#[derive(Debug)]
#[non_exhaustive]
pub struct Listed {
    /// The tools, in the server's order (at most [`MAX_LISTED`]), with the token removed
    /// from their names, titles, descriptions and schemas.
    pub tools: Vec<Tool>,
    /// Notes for the operator (tools not offered, tools past the limit).
    pub warnings: Vec<String>,
    /// The era the server speaks.
    pub era: Era,
    /// Tools not offered for an invalid `x-mcp-header` annotation, with the reason, for
    /// the message that names a missing tool.
    pub(crate) hidden: Vec<(String, String)>,
}
