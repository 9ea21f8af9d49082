//! Discovery: read a server's tool list and turn the named tools into Brain bindings
//! (`mcp-tools`), or list every tool a server offers (`mcp-tools -list`).

use std::fmt;
use std::time::Duration;

use brain_mcp_proto::client::{CallError, Era, Identity};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::{BearerToken, Delivery, ErrorKind, MESSAGE_LIMIT};
use brain_tools_core::Secret;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::time::Instant;

use crate::auth::OAuthClient;
use crate::client::McpClient;
use crate::driver::{Cause, DriverError, rpc_text, safe};
use crate::server::Server;
use crate::target::Target;

mod output;
mod pages;
mod select;

pub(crate) use select::model_name;
#[cfg(test)]
mod tests;

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
/// The most tools [`list`] returns.
pub const MAX_LISTED: usize = pages::MAX_LISTED;

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
}

/// Why discovery failed: the kind of failure, whether a request may have reached the
/// server, and a message that names the problem (and the step, for the server's failures;
/// never a secret). `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoverError {
    kind: DiscoverErrorKind,
    delivery: Delivery,
    message: String,
    names: Vec<String>,
}

/// What kind of failure a [`DiscoverError`] is, grouped by who is to blame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoverErrorKind {
    /// The request itself is unusable (names, URL, token variable); nothing was sent.
    Invalid,
    /// The server could not be reached, or gave no definite answer in time.
    Unreachable,
    /// The server refused the credentials (401 or 403), or no OAuth token could be had.
    Refused,
    /// The server answered, but with an error or not as the protocol says.
    Server,
    /// Named tools the server does not offer ([`DiscoverError::names`]; the message
    /// suggests close names).
    Missing,
    /// Tools whose definitions would not load as Brain bindings
    /// ([`DiscoverError::names`]; the message gives the loader's reasons).
    Unloadable,
    /// The whole discovery took longer than its deadline.
    Timeout,
}

impl DiscoverError {
    pub(crate) fn new(kind: DiscoverErrorKind, delivery: Delivery, message: String) -> Self {
        Self {
            kind,
            delivery,
            message,
            names: Vec::new(),
        }
    }

    /// A failure naming tools (missing or unloadable).
    pub(crate) fn naming(kind: DiscoverErrorKind, names: Vec<String>, message: String) -> Self {
        Self {
            names,
            ..Self::new(kind, Delivery::Answered, message)
        }
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> DiscoverErrorKind {
        self.kind
    }

    /// Whether a request may have reached the server (discovery sends nothing with side
    /// effects; this says how far it got).
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The tools named by a [`DiscoverErrorKind::Missing`] or
    /// [`DiscoverErrorKind::Unloadable`] failure; empty otherwise.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A failure of the driver, as discovery reports it: the step named, the server's
    /// words made safe with `secrets`.
    pub(crate) fn from_driver(e: &DriverError, secrets: &brain_mcp_transport::Secrets) -> Self {
        use DiscoverErrorKind::{Refused, Server as ServerKind, Unreachable};
        let step = e.step_name();
        let text = e.message(secrets);
        let (kind, message) = match &e.cause {
            Cause::Link(t)
                if matches!(
                    t.kind(),
                    ErrorKind::Connect
                        | ErrorKind::Tls
                        | ErrorKind::InvalidRequest
                        | ErrorKind::Redirect
                ) =>
            {
                (
                    Unreachable,
                    format!("{step}: could not reach the server: {text}"),
                )
            }
            Cause::Link(t) if *t.kind() == ErrorKind::Authorization => {
                (Refused, format!("{step}: {text}"))
            }
            Cause::Link(t) if matches!(t.kind(), ErrorKind::Status { .. }) => {
                (ServerKind, format!("{step}: the server failed: {text}"))
            }
            Cause::Link(_) => (
                ServerKind,
                format!("{step}: the exchange with the server failed: {text}"),
            ),
            Cause::Core(CallError::Unauthorized { .. }) | Cause::Refused(_) => {
                (Refused, format!("{step}: {text}"))
            }
            Cause::Core(CallError::SessionExpired) => {
                (ServerKind, format!("{step}: the server ended the session"))
            }
            Cause::Core(CallError::Rpc { error, .. }) => (
                ServerKind,
                format!(
                    "{step}: the server answered with {}",
                    rpc_text(secrets, error, e.status)
                ),
            ),
            Cause::Unreachable(_) | Cause::Start { started: false, .. } => (
                Unreachable,
                format!("{step}: could not reach the server: {text}"),
            ),
            _ => (ServerKind, format!("{step}: {text}")),
        };
        Self::new(kind, e.delivery(), message)
    }
}

impl fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DiscoverError {}

fn invalid<T>(message: impl Into<String>) -> Result<T, DiscoverError> {
    Err(DiscoverError::new(
        DiscoverErrorKind::Invalid,
        Delivery::NotSent,
        message.into(),
    ))
}

/// Checks the request without sending anything: tool names, URL and token.
pub(crate) fn check(request: &Request) -> Result<(Target, Option<Secret>), DiscoverError> {
    check_request(request)?;
    if request.oauth.is_some() && request.token_env.is_some() {
        return invalid("give token_env or OAuth credentials, not both");
    }
    target(&request.url, request.token_env.as_deref())
}

fn check_request(request: &Request) -> Result<(), DiscoverError> {
    if request.tools.is_empty() {
        return invalid("the tool list is empty: name 1 to 128 tools");
    }
    if request.tools.len() > MAX_TOOLS {
        return invalid(format!(
            "{} tools named: at most {MAX_TOOLS} are allowed",
            request.tools.len()
        ));
    }
    if let Some(empty) = request.tools.iter().position(String::is_empty) {
        return invalid(format!("tool name {} of the list is empty", empty + 1));
    }
    for (i, name) in request.tools.iter().enumerate() {
        if request.tools[..i].contains(name) {
            return invalid(format!("tool {name:?} is named more than once"));
        }
    }
    if request.tenant.is_empty() {
        return invalid("the tenant is empty");
    }
    Ok(())
}

/// The target at `url` with the token from `token_env`, checked without sending anything.
fn target(url: &str, token_env: Option<&str>) -> Result<(Target, Option<Secret>), DiscoverError> {
    let token = match token_env {
        Some(var) => match Secret::from_env(var) {
            Ok(token) => Some(token),
            Err(e) => return invalid(e.to_string()),
        },
        None => None,
    };
    let bearer = token.as_ref().map(|t| BearerToken::new(t.expose()));
    let target = match Target::new(url, bearer) {
        Ok(target) => target,
        Err(message) => return invalid(message),
    };
    Ok((target, token))
}

/// Discovers the named tools, bounded by `request.deadline`.
///
/// Handshake-era sessions are closed (DELETE) in the background when discovery ends, however
/// it ends; call [`McpClient::flush`] before the process exits so those requests go out.
pub async fn discover(client: &McpClient, request: &Request) -> Result<Discovered, DiscoverError> {
    let (target, _token) = check(request)?;
    let mut target = target.with_secrets(client.proxy_secrets());
    if let Some(oauth) = &request.oauth {
        target = target.with_oauth(client.authorizers(), oauth);
    }
    let auth = target.auth.clone();
    let wanted = pages::Wanted::Named(request.tools.clone());
    let until = Instant::now() + request.deadline;
    let server = Server::http(client, target.clone());
    let (era, collected) = collect(
        client,
        &server,
        client.identity(),
        wanted,
        until,
        request.deadline,
    )
    .await?;
    // Building the bindings is CPU work (hints, compiling every schema to check that it
    // loads): off the runtime, and inside the same deadline as the network.
    let stop = std::time::Instant::now() + until.saturating_duration_since(Instant::now());
    let deadline = request.deadline;
    let mut request = request.clone();
    // The bindings name the issuer that granted the token (none if none was asked for).
    let issuer = auth.as_ref().and_then(|a| a.issuer());
    request.oauth = match (request.oauth.take(), issuer) {
        (Some(oauth), Some(issuer)) => Some(oauth.pinned_to(issuer)),
        _ => None,
    };
    let secrets = server.secrets();
    let work = tokio::task::spawn_blocking(move || {
        select::select(&secrets, &request, era, collected, stop)
    });
    match tokio::time::timeout_at(until, work).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(DiscoverError::new(
            DiscoverErrorKind::Server,
            Delivery::Answered,
            "building the bindings failed unexpectedly".into(),
        )),
        Err(_) => Err(timed_out(deadline)),
    }
}

/// Lists every tool the server at `url` offers (at most [`MAX_LISTED`]), with the token
/// from `token_env`, bounded by `deadline`: what to choose from before binding. The token
/// is removed from everything listed, as from bindings.
pub async fn list(
    client: &McpClient,
    url: &str,
    token_env: Option<&str>,
    deadline: Duration,
) -> Result<Listed, DiscoverError> {
    let (target, _token) = target(url, token_env)?;
    let target = target.with_secrets(client.proxy_secrets());
    let server = Server::http(client, target);
    list_on(client, &server, client.identity(), deadline).await
}

/// [`list`] with OAuth client credentials: a token is got when the server asks for one.
pub async fn list_oauth(
    client: &McpClient,
    url: &str,
    oauth: &OAuthClient,
    deadline: Duration,
) -> Result<Listed, DiscoverError> {
    let (target, _) = target(url, None)?;
    let target = target
        .with_secrets(client.proxy_secrets())
        .with_oauth(client.authorizers(), oauth);
    let server = Server::http(client, target);
    list_on(client, &server, client.identity(), deadline).await
}

/// [`list`] on a server already built (an HTTP server with the token given in code, or a
/// managed stdio server), as `identity`.
pub(crate) async fn list_on(
    client: &McpClient,
    server: &Server,
    identity: &Identity,
    deadline: Duration,
) -> Result<Listed, DiscoverError> {
    let until = Instant::now() + deadline;
    let wanted = pages::Wanted::All;
    let (era, collected) = collect(client, server, identity, wanted, until, deadline).await?;
    let secrets = &server.secrets();
    let warnings = collected
        .warnings()
        .iter()
        .map(|w| safe(secrets, w, MESSAGE_LIMIT))
        .collect();
    let mut tools: Vec<Tool> = collected.found.into_iter().flatten().collect();
    for tool in &mut tools {
        output::scrub_tool(secrets, tool);
    }
    Ok(Listed {
        tools,
        warnings,
        era,
    })
}

/// Learns the era and reads every page, by `until` (`deadline` after the start).
async fn collect(
    client: &McpClient,
    server: &Server,
    identity: &Identity,
    wanted: pages::Wanted,
    until: Instant,
    deadline: Duration,
) -> Result<(Era, pages::Collected), DiscoverError> {
    let mut collected = pages::Collected::new(wanted);
    let work = server.list(client, identity, until, |framing, tools| {
        collected.add_page(framing, tools);
    });
    let era = tokio::time::timeout_at(until, work)
        .await
        .map_err(|_| timed_out(deadline))?
        .map_err(|e| DiscoverError::from_driver(&e, &server.secrets()))?;
    Ok((era, collected))
}

/// The error of a discovery that ran out of time.
fn timed_out(deadline: Duration) -> DiscoverError {
    DiscoverError::new(
        DiscoverErrorKind::Timeout,
        Delivery::MaybeSent,
        format!(
            "discovery took longer than {} s (connect, handshake, every page of tools/list \
             and building the bindings)",
            deadline.as_secs_f64()
        ),
    )
}
