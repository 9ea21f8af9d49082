//! Discovery: read a server's tool list and turn the named tools into Brain bindings
//! (`mcp-tools`), or list every tool a server offers (`mcp-tools -list`).

use std::time::Duration;

use brain_mcp_proto::client::{Era, Identity};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::{BearerToken, Delivery, MESSAGE_LIMIT};
use brain_tools_core::Secret;
use tokio::time::Instant;

use crate::auth::OAuthClient;
use crate::client::McpClient;
use crate::driver::safe;
use crate::server::Server;
use crate::target::Target;

mod error;
mod model;
mod output;
mod pages;
mod select;

use error::invalid;
pub use error::{DiscoverError, DiscoverErrorKind};
pub use model::{
    DEFAULT_DEADLINE, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECONDS, Discovered,
    DiscoveredBinding, Listed, MAX_LISTED, MAX_PAGES, MAX_TOOLS, Request,
};

#[cfg(test)]
mod tests;

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
        Err(why) => return invalid(why.to_string()),
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
    let hidden = collected.hidden;
    let mut tools: Vec<Tool> = collected.found.into_iter().flatten().collect();
    for tool in &mut tools {
        output::scrub_tool(secrets, tool);
    }
    Ok(Listed {
        tools,
        warnings,
        era,
        hidden,
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
