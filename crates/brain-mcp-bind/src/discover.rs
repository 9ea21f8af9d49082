//! Discovery: read a server's tool list and turn the named tools into Brain bindings.

use std::fmt;
use std::time::Duration;

use brain_mcp_proto::headers::param_headers;
use brain_mcp_proto::mcp::{
    ClientCapabilities, ListToolsParams, ListToolsResult, Tool, methods, parse,
};
use brain_mcp_proto::meta::RequestMetaBuilder;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};
use brain_mcp_transport::{BearerToken, MESSAGE_LIMIT};
use brain_tools_core::Secret;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::client::{McpClient, Target};
use crate::era::Era;
use crate::exchange::{self, StepError, Wire};
use crate::{failure, probe, text};

/// The default bound on a whole discovery: connect, handshake and every page.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);
/// The most tool names one discovery may ask for.
pub const MAX_TOOLS: usize = 128;
/// The most `tools/list` pages read before giving up on a server that keeps paginating.
pub const MAX_PAGES: usize = 100;
/// Default `timeout_seconds` of a printed binding.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
/// Default `max_output_bytes` of a printed binding.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1_048_576;

/// What to discover.
#[derive(Clone, Debug)]
pub struct Request {
    /// The server's MCP endpoint.
    pub url: String,
    /// The environment variable holding the server's API key, if it needs one.
    pub token_env: Option<String>,
    /// The tenant the bindings allow.
    pub tenant: String,
    /// The remote tool names to bind, in output order.
    pub tools: Vec<String>,
    /// The bound on the whole discovery.
    pub deadline: Duration,
}

/// One printed binding, its fields in the order the product documents them.
#[derive(Debug, Serialize)]
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
    /// The one tenant allowed.
    pub tenants: Vec<String>,
    /// The default deadline.
    pub timeout_seconds: u64,
    /// The default output limit.
    pub max_output_bytes: u64,
    /// The output schema, when the tool has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Box<RawValue>>,
}

/// The outcome of a discovery that worked: the bindings and any warnings for stderr.
#[derive(Debug)]
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

/// Why discovery failed. Every message names the problem.
#[derive(Debug, PartialEq, Eq)]
pub struct DiscoverError(pub String);

impl fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DiscoverError {}

fn fail<T>(message: impl Into<String>) -> Result<T, DiscoverError> {
    Err(DiscoverError(message.into()))
}

/// Checks the request without sending anything: tool names, URL and token.
pub(crate) fn check(request: &Request) -> Result<(Target, Option<Secret>), DiscoverError> {
    if request.tools.is_empty() {
        return fail("the tool list is empty: name 1 to 128 tools");
    }
    if request.tools.len() > MAX_TOOLS {
        return fail(format!(
            "{} tools named: at most {MAX_TOOLS} are allowed",
            request.tools.len()
        ));
    }
    if let Some(empty) = request.tools.iter().position(String::is_empty) {
        return fail(format!("tool name {} of the list is empty", empty + 1));
    }
    for (i, name) in request.tools.iter().enumerate() {
        if request.tools[..i].contains(name) {
            return fail(format!("tool {name:?} is named more than once"));
        }
    }
    if request.tenant.is_empty() {
        return fail("the tenant is empty");
    }
    let token = match &request.token_env {
        Some(var) => Some(Secret::from_env(var).map_err(|e| DiscoverError(e.to_string()))?),
        None => None,
    };
    let bearer = token.as_ref().map(|t| BearerToken::new(t.expose()));
    let target = Target::new(&request.url, bearer).map_err(DiscoverError)?;
    Ok((target, token))
}

/// Discovers the named tools, bounded by `request.deadline`.
///
/// Handshake-era sessions are closed (DELETE) in the background when discovery ends, however
/// it ends; call [`McpClient::flush`] before the process exits so those requests go out.
pub async fn discover(client: &McpClient, request: &Request) -> Result<Discovered, DiscoverError> {
    let (target, _token) = check(request)?;
    let work = async {
        let era = probe::era_of(client, &target)
            .await
            .map_err(|e| describe(&target, "server/discover (learning the protocol era)", e))?;
        let listing = match era {
            Era::Handshake => {
                let session = probe::open_session(client, &target)
                    .await
                    .map_err(|e| describe(&target, "initialize", e))?;
                list_all(client, request, &target, session.wire(), era).await
            }
            Era::Stateless(v) => list_all(client, request, &target, Wire::Stateless(v), era).await,
        }?;
        Ok::<_, DiscoverError>((era, listing))
    };
    let (era, listing) = tokio::time::timeout(request.deadline, work)
        .await
        .map_err(|_| {
            DiscoverError(format!(
                "discovery took longer than {} s (connect, handshake and every page of tools/list)",
                request.deadline.as_secs_f64()
            ))
        })??;
    select(&target, request, era, listing)
}

/// Names kept for "did you mean" hints; a longer list is not searched further.
const MAX_NAMES_KEPT: usize = 10_000;
/// Tools hidden for invalid headers that get a warning line each; the rest are counted.
const MAX_HIDDEN_REPORTED: usize = 100;

/// What the pages of `tools/list` yielded, kept small: only the named tools are kept whole.
#[derive(Debug, Default)]
struct Listing {
    /// The first listing of each named tool, indexed like `Request::tools`.
    found: Vec<Option<Tool>>,
    /// Names of the offered tools, for suggestions (at most [`MAX_NAMES_KEPT`]).
    names: Vec<String>,
    /// Tools not offered for invalid `x-mcp-header` annotations: name and reason
    /// (at most [`MAX_HIDDEN_REPORTED`]).
    hidden: Vec<(String, String)>,
    /// How many tools were not offered in all.
    hidden_total: usize,
    /// How many tools the server listed in all.
    total: usize,
}

impl Listing {
    fn new(request: &Request) -> Self {
        Self {
            found: request.tools.iter().map(|_| None).collect(),
            ..Self::default()
        }
    }

    /// Takes in one page: checks header annotations (2026 era) and keeps the named tools.
    fn add_page(&mut self, request: &Request, era: Era, tools: Vec<Tool>) {
        for tool in tools {
            self.total += 1;
            if let Era::Stateless(_) = era {
                let invalid = tool
                    .input_schema_value()
                    .ok()
                    .and_then(|schema| param_headers(&schema).err());
                if let Some(problem) = invalid {
                    self.hidden_total += 1;
                    if self.hidden.len() < MAX_HIDDEN_REPORTED {
                        self.hidden.push((tool.name, problem.to_string()));
                    }
                    continue;
                }
            }
            if self.names.len() < MAX_NAMES_KEPT {
                self.names.push(tool.name.clone());
            }
            if let Some(i) = request.tools.iter().position(|n| *n == tool.name)
                && self.found[i].is_none()
            {
                self.found[i] = Some(tool);
            }
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .hidden
            .iter()
            .map(|(name, problem)| {
                format!(
                    "tool {name:?} is not offered: its input schema has an invalid x-mcp-header annotation ({problem})"
                )
            })
            .collect();
        if self.hidden_total > self.hidden.len() {
            warnings.push(format!(
                "{} more tools are not offered for invalid x-mcp-header annotations",
                self.hidden_total - self.hidden.len()
            ));
        }
        warnings
    }
}

/// Reads every page of the tool list, at most [`MAX_PAGES`].
async fn list_all(
    client: &McpClient,
    request: &Request,
    target: &Target,
    wire: Wire<'_>,
    era: Era,
) -> Result<Listing, DiscoverError> {
    let stateless = match era {
        Era::Stateless(v) => Some(v),
        Era::Handshake => None,
    };
    let mut listing = Listing::new(request);
    let mut cursor = None;
    for page_number in 1..=MAX_PAGES {
        let params = ListToolsParams {
            cursor: cursor.take(),
            meta: stateless.map(|v| {
                RequestMetaBuilder::new(v, ClientCapabilities::default())
                    .client_info(client.info().clone())
                    .build()
            }),
            ..ListToolsParams::default()
        };
        let step = format!("tools/list (page {page_number})");
        let answer = exchange::request(client, target, wire, methods::TOOLS_LIST, &params).await;
        let (raw, _) = answer.map_err(|e| {
            // A stateless request refused for its version or headers means the cached era
            // is stale: forget it, so the next discovery or call probes again.
            if let (Some(_), StepError::Rpc { code, .. }) = (stateless, &e)
                && probe::invalidates_era(*code)
            {
                client.eras().forget(&target.key);
            }
            describe(target, &step, e)
        })?;
        let page: ListToolsResult = parse(&raw).map_err(|e| {
            DiscoverError(format!(
                "{step}: the result is not a tool list: {}",
                failure::safe(target, &e.to_string(), FRAGMENT_LIMIT)
            ))
        })?;
        listing.add_page(request, era, page.tools);
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(listing),
        }
    }
    fail(format!(
        "the server kept paginating tools/list past {MAX_PAGES} pages; giving up"
    ))
}

/// Builds the bindings of the named tools, in order, or names every missing one.
fn select(
    target: &Target,
    request: &Request,
    era: Era,
    listing: Listing,
) -> Result<Discovered, DiscoverError> {
    let mut warnings = listing.warnings();
    let missing: Vec<&str> = request
        .tools
        .iter()
        .zip(&listing.found)
        .filter(|(_, tool)| tool.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        let names = listing.names.iter().map(String::as_str);
        let lines: Vec<String> = missing
            .iter()
            .map(|m| {
                if let Some((_, why)) = listing.hidden.iter().find(|(n, _)| n == m) {
                    let why = cut(why, FRAGMENT_LIMIT);
                    return format!("{m:?} (not offered: invalid x-mcp-header annotation: {why})");
                }
                let close = text::close_matches(m, names.clone());
                if close.is_empty() {
                    format!("{m:?}")
                } else {
                    format!("{m:?} (did you mean {}?)", quote_list(&close))
                }
            })
            .collect();
        let empty = if listing.total == 0 {
            " (its tool list is empty)"
        } else {
            ""
        };
        let message = format!("the server has no tool named {}{empty}", lines.join(", "));
        return fail(target.redact(&message));
    }
    let mut bindings: Vec<DiscoveredBinding> = Vec::with_capacity(request.tools.len());
    for tool in listing.found.iter().flatten() {
        let mut binding = binding_of(request, tool);
        let name = unique_name(&model_name(&tool.name), &bindings);
        if name != tool.name {
            warnings.push(format!(
                "tool {:?} is bound as {name:?}: binding names are 1 to 64 of A-Z a-z 0-9 _ -",
                cut(&tool.name, FRAGMENT_LIMIT)
            ));
            binding.name = name;
        }
        output::scrub(target, &mut binding);
        bindings.push(binding);
    }
    let json = output::render(&bindings)?;
    output::check_loads(target, &bindings, &json)?;
    let warnings = warnings
        .iter()
        .map(|w| failure::safe(target, w, MESSAGE_LIMIT))
        .collect();
    Ok(Discovered {
        bindings,
        warnings,
        era,
        json,
    })
}

/// The longest binding name the host config accepts.
const MAX_BINDING_NAME: usize = 64;

/// A binding name the host config accepts for a remote tool name: characters outside
/// `A-Za-z0-9_-` become `_`, and the result is cut to 64 characters. (Remote names are
/// free-form in practice; binding names are what the model sees.)
fn model_name(remote: &str) -> String {
    let mut name: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_BINDING_NAME)
        .collect();
    if name.is_empty() {
        name.push('_');
    }
    name
}

/// `name`, or `name` with a numeric suffix when an earlier binding already has it.
fn unique_name(name: &str, taken: &[DiscoveredBinding]) -> String {
    let free = |candidate: &str| taken.iter().all(|b| b.name != candidate);
    if free(name) {
        return name.to_owned();
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = MAX_BINDING_NAME - suffix.len();
            format!("{}{suffix}", &name[..name.len().min(keep)])
        })
        .find(|candidate| free(candidate))
        .unwrap_or_else(|| name.to_owned())
}

fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{:?}", cut(n, FRAGMENT_LIMIT)))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn binding_of(request: &Request, tool: &Tool) -> DiscoveredBinding {
    DiscoveredBinding {
        name: tool.name.clone(),
        description: tool.description.clone().unwrap_or_default(),
        input_schema: tool.input_schema.clone(),
        url: request.url.clone(),
        mcp_tool: tool.name.clone(),
        token_env: request.token_env.clone(),
        tenants: vec![request.tenant.clone()],
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        output_schema: tool.output_schema.clone(),
    }
}

/// A discovery failure from a step error, naming the step: what went wrong, never a token.
fn describe(target: &Target, step: &str, e: StepError) -> DiscoverError {
    use brain_mcp_transport::ErrorKind;
    let safe = |m: &str| failure::safe(target, m, MESSAGE_LIMIT);
    DiscoverError(match e {
        StepError::Transport(e) => match e.kind() {
            ErrorKind::Connect
            | ErrorKind::Tls
            | ErrorKind::InvalidRequest
            | ErrorKind::Redirect => {
                format!(
                    "{step}: could not reach the server: {}",
                    safe(&e.to_string())
                )
            }
            ErrorKind::Status { .. } => {
                format!("{step}: the server failed: {}", safe(&e.to_string()))
            }
            _ => format!(
                "{step}: the exchange with the server failed: {}",
                safe(&e.to_string())
            ),
        },
        StepError::Rpc {
            code,
            message,
            data,
        } => format!(
            "{step}: the server answered with {}",
            failure::rpc_text(target, code, &message, data.as_deref())
        ),
        StepError::Protocol(m)
        | StepError::UserInput(m)
        | StepError::Unsupported(m)
        | StepError::Refused(m) => format!("{step}: {}", safe(&m)),
    })
}

mod output;
#[cfg(test)]
mod tests;
