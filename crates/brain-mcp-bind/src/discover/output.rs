//! What `mcp-tools` prints: the bindings as JSON, with the token removed from what the
//! server wrote, and checked with the host's own config loader before anything is printed.

use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::MESSAGE_LIMIT;
use brain_tools_core::HostConfig;
use serde_json::Value;
use serde_json::value::RawValue;

use brain_mcp_transport::Delivery;

use super::error::{DiscoverError, DiscoverErrorKind};
use super::model::DiscoveredBinding;
use brain_mcp_transport::Secrets;

/// The bindings as printed: a pretty JSON array.
pub(crate) fn render(bindings: &[DiscoveredBinding]) -> Result<String, DiscoverError> {
    serde_json::to_string_pretty(bindings).map_err(|e| {
        DiscoverError::new(
            DiscoverErrorKind::Server,
            Delivery::Answered,
            format!("could not print the bindings: {e}"),
        )
    })
}

/// Removes the token from everything the server wrote into `binding`: the description
/// and both schemas (a schema is re-written only if it held the token).
pub(crate) fn scrub(secrets: &Secrets, binding: &mut DiscoveredBinding) {
    if secrets.is_empty() {
        return;
    }
    if let std::borrow::Cow::Owned(clean) = secrets.redact(&binding.description) {
        binding.description = clean;
    }
    scrub_raw(secrets, &mut binding.input_schema);
    if let Some(schema) = &mut binding.output_schema {
        scrub_raw(secrets, schema);
    }
}

/// Removes the token from everything the server wrote into a listed `tool` that a caller
/// may show: its name, title and description, and both schemas (re-written only if they
/// held it).
pub(crate) fn scrub_tool(secrets: &Secrets, tool: &mut Tool) {
    if secrets.is_empty() {
        return;
    }
    let text = |s: &mut String| {
        if let std::borrow::Cow::Owned(clean) = secrets.redact(s) {
            *s = clean;
        }
    };
    text(&mut tool.name);
    tool.title.as_mut().map(text);
    tool.description.as_mut().map(text);
    scrub_raw(secrets, &mut tool.input_schema);
    if let Some(schema) = &mut tool.output_schema {
        scrub_raw(secrets, schema);
    }
}

fn scrub_raw(secrets: &Secrets, raw: &mut Box<RawValue>) {
    // Escapes (`\u0041`) could hide the token from a search of the text: look at the
    // decoded strings instead, and re-write the schema only when one of them changes.
    let Ok(mut value) = serde_json::from_str::<Value>(raw.get()) else {
        return;
    };
    if secrets.redact_value(&mut value)
        && let Ok(clean) = serde_json::value::to_raw_value(&value)
    {
        *raw = clean;
    }
}

/// Loads `{"tools": <rendered>}` exactly as a host would; every binding that would make
/// the config fail is named with its reasons.
pub(crate) fn check_loads(
    secrets: &Secrets,
    bindings: &[DiscoveredBinding],
    rendered: &str,
) -> Result<(), DiscoverError> {
    let document = format!("{{\"tools\": {rendered}}}");
    let Err(errors) = HostConfig::load(&document) else {
        return Ok(());
    };
    let mut lines = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    for error in errors.errors() {
        let (index, rest) = split_index(&error.path);
        let binding = index.and_then(|i| bindings.get(i));
        if let Some(b) = binding
            && !tools.contains(&b.mcp_tool)
        {
            tools.push(b.mcp_tool.clone());
        }
        if lines.len() < MAX_PROBLEMS_SHOWN {
            let safe = |text: &str| crate::driver::safe(secrets, text, NAME_LIMIT);
            let tool =
                binding.map_or_else(|| "?".to_owned(), |b| format!("{:?}", safe(&b.mcp_tool)));
            // The path is made of the server's keys: as untrusted as the reason.
            let rest = safe(rest);
            let reason = safe(&error.reason);
            lines.push(format!("tool {tool}: {rest}: {reason}"));
        }
    }
    let more = errors.errors().len().saturating_sub(lines.len());
    if more > 0 {
        lines.push(format!("and {more} more problems"));
    }
    let which = if tools.len() == 1 {
        "a tool"
    } else {
        "some tools"
    };
    let message = format!(
        "the server's definition of {which} would not load as a Brain binding: {}",
        lines.join("; ")
    );
    // Redacted whole, so a token spelled across keys of a path is caught too.
    let message = crate::driver::safe(secrets, &message, MESSAGE_LIMIT);
    Err(DiscoverError::naming(
        DiscoverErrorKind::Unloadable,
        tools,
        message,
    ))
}

/// Problems named in the message; the rest are counted.
const MAX_PROBLEMS_SHOWN: usize = 10;
/// The most bytes of one name, path or reason in the message.
const NAME_LIMIT: usize = 200;

/// `tools[3].input_schema.type` -> `(Some(3), "input_schema.type")`.
fn split_index(path: &str) -> (Option<usize>, &str) {
    let Some(rest) = path.strip_prefix("tools[") else {
        return (None, path);
    };
    let Some((index, rest)) = rest.split_once(']') else {
        return (None, path);
    };
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    (
        index.parse().ok(),
        if rest.is_empty() { "(binding)" } else { rest },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_binding_and_field() {
        assert_eq!(
            split_index("tools[3].input_schema.type"),
            (Some(3), "input_schema.type")
        );
        assert_eq!(split_index("tools[0]"), (Some(0), "(binding)"));
        assert_eq!(split_index("$"), (None, "$"));
    }
}
