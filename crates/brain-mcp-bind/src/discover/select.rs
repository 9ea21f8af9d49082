//! Turning the named tools of a listing into bindings that load, or naming what is missing.

use std::time::Instant;

use brain_mcp_proto::client::Era;
use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::MESSAGE_LIMIT;

use super::error::{DiscoverError, DiscoverErrorKind};
use super::model::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECONDS, Discovered, DiscoveredBinding, Request,
};
use super::output;
use super::pages::Collected;
use crate::OAuthClient;
use crate::bindings;
use crate::driver::safe;
use brain_mcp_transport::Secrets;

/// Builds the bindings of the named tools, in order, or names every missing one; the
/// search for "did you mean" hints stops at `until`.
pub(super) fn select(
    secrets: &Secrets,
    request: &Request,
    era: Era,
    collected: Collected,
    until: Instant,
) -> Result<Discovered, DiscoverError> {
    let mut warnings = collected.warnings();
    let missing: Vec<&str> = request
        .tools
        .iter()
        .zip(&collected.found)
        .filter(|(_, tool)| tool.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        let lines = bindings::missing(
            &missing,
            collected.names.iter().map(String::as_str),
            &collected.hidden,
            Some(until),
        );
        let empty = if collected.total == 0 {
            " (its tool list is empty)"
        } else {
            ""
        };
        let message = format!("the server has no tool named {lines}{empty}");
        return Err(DiscoverError::naming(
            DiscoverErrorKind::Missing,
            missing.iter().map(|m| (*m).to_owned()).collect(),
            secrets.redact(&message).into_owned(),
        ));
    }
    let found: Vec<&Tool> = collected.found.iter().flatten().collect();
    let wanted: Vec<(&str, Option<&str>)> = found.iter().map(|t| (t.name.as_str(), None)).collect();
    let (names, notes) = bindings::names(&wanted);
    warnings.extend(notes);
    let mut bindings: Vec<DiscoveredBinding> = Vec::with_capacity(found.len());
    for (tool, name) in found.into_iter().zip(names) {
        let mut binding = binding_of(request, tool);
        binding.name = name;
        output::scrub(secrets, &mut binding);
        bindings.push(binding);
    }
    let json = output::render(&bindings)?;
    output::check_loads(secrets, &bindings, &json)?;
    let warnings = warnings
        .iter()
        .map(|w| safe(secrets, w, MESSAGE_LIMIT))
        .collect();
    Ok(Discovered {
        bindings,
        warnings,
        era,
        json,
    })
}

fn binding_of(request: &Request, tool: &Tool) -> DiscoveredBinding {
    DiscoveredBinding {
        name: tool.name.clone(),
        description: tool.description.clone().unwrap_or_default(),
        input_schema: tool.input_schema.clone(),
        url: request.url.clone(),
        mcp_tool: tool.name.clone(),
        token_env: request.token_env.clone(),
        oauth: request.oauth.as_ref().and_then(OAuthClient::config_form),
        tenants: vec![request.tenant.clone()],
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        output_schema: tool.output_schema.clone(),
        task_support: tool.task_support(),
    }
}
