//! Turning the named tools of a listing into bindings that load, or naming what is missing.

use std::time::Instant;

use brain_mcp_proto::client::Era;
use brain_mcp_proto::mcp::Tool;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};
use brain_mcp_transport::MESSAGE_LIMIT;

use super::error::{DiscoverError, DiscoverErrorKind};
use super::model::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECONDS, Discovered, DiscoveredBinding, Request,
};
use super::output;
use super::pages::Collected;
use crate::OAuthClient;
use crate::driver::safe;
use crate::text;
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
        let names = collected.names.iter().map(String::as_str);
        let lines: Vec<String> = missing
            .iter()
            .map(|m| {
                if let Some((_, why)) = collected.hidden.iter().find(|(n, _)| n == m) {
                    let why = cut(why, FRAGMENT_LIMIT);
                    return format!("{m:?} (not offered: invalid x-mcp-header annotation: {why})");
                }
                let close = text::close_matches(m, names.clone(), Some(until));
                if close.is_empty() {
                    format!("{m:?}")
                } else {
                    format!("{m:?} (did you mean {}?)", quote_list(&close))
                }
            })
            .collect();
        let empty = if collected.total == 0 {
            " (its tool list is empty)"
        } else {
            ""
        };
        let message = format!("the server has no tool named {}{empty}", lines.join(", "));
        return Err(DiscoverError::naming(
            DiscoverErrorKind::Missing,
            missing.iter().map(|m| (*m).to_owned()).collect(),
            secrets.redact(&message).into_owned(),
        ));
    }
    let mut bindings: Vec<DiscoveredBinding> = Vec::with_capacity(request.tools.len());
    for tool in collected.found.iter().flatten() {
        let mut binding = binding_of(request, tool);
        let name = unique_name(&model_name(&tool.name), &bindings);
        if name != tool.name {
            warnings.push(format!(
                "tool {:?} is bound as {name:?}: binding names are 1 to 64 of A-Z a-z 0-9 _ -",
                cut(&tool.name, FRAGMENT_LIMIT)
            ));
            binding.name = name;
        }
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

/// The longest binding name the host config accepts.
const MAX_BINDING_NAME: usize = 64;

/// A binding name the host config accepts for a remote tool name: characters outside
/// `A-Za-z0-9_-` become `_`, and the result is cut to 64 characters. (Remote names are
/// free-form in practice; binding names are what the model sees.)
pub(crate) fn model_name(remote: &str) -> String {
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
pub(super) fn unique_name(name: &str, taken: &[DiscoveredBinding]) -> String {
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

pub(super) fn binding_of(request: &Request, tool: &Tool) -> DiscoveredBinding {
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
