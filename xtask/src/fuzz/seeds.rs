//! Seed corpora for the fuzz targets, built from the captured fixtures (and, for the host
//! config, the JSON examples in `docs/`). Nothing here is committed: `cargo xtask fuzz`
//! writes the seeds into `fuzz/corpus/<target>/` (ignored by git) before each run.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::fixtures::{self, Capture};
use super::sse;

/// The seeds of every target in `targets`, by target, from the files under `root`.
pub(crate) fn all(root: &Path, targets: &[&'static str]) -> Result<Vec<Seeds>, String> {
    let captures = fixtures::read_all(root)?;
    targets
        .iter()
        .map(|&target| {
            let inputs = match target {
                "decode" => decode(&captures),
                "sse" => sse::seeds(&captures),
                "host_config" => host_config(&captures, &doc_examples(root)?),
                "convert" => convert(&captures),
                "header_value" => header_value(&captures),
                other => return Err(format!("no seeds defined for fuzz target `{other}`")),
            };
            Ok(Seeds { target, inputs })
        })
        .collect()
}

/// One target's seed inputs (distinct, in a stable order).
pub(crate) struct Seeds {
    /// The fuzz target's name.
    pub(crate) target: &'static str,
    /// The inputs.
    pub(crate) inputs: BTreeSet<Vec<u8>>,
}

impl Seeds {
    /// Writes each input to `dir` as `seed-<hash>`, keeping whatever else is there.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for input in &self.inputs {
            let file = dir.join(format!("seed-{:016x}", fnv1a(input)));
            std::fs::write(&file, input)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        Ok(())
    }
}

/// A stable 64-bit FNV-1a hash, for file names that do not change between runs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `decode`: every message as captured, and each capture's received messages as a batch.
fn decode(captures: &[Capture]) -> BTreeSet<Vec<u8>> {
    let mut seeds = BTreeSet::new();
    for capture in captures {
        let received: Vec<&str> = capture
            .messages
            .iter()
            .filter(|m| !m.sent)
            .map(|m| m.text.as_str())
            .collect();
        seeds.insert(format!("[{}]", received.join(",")).into_bytes());
        seeds.extend(capture.messages.iter().map(|m| m.text.clone().into_bytes()));
    }
    seeds
}

/// `convert`: the `result` of every response a server sent.
fn convert(captures: &[Capture]) -> BTreeSet<Vec<u8>> {
    captures
        .iter()
        .flat_map(|c| &c.messages)
        .filter(|m| !m.sent)
        .filter_map(|m| m.member("result"))
        .map(String::into_bytes)
        .collect()
}

/// `host_config`: the examples in the docs, and configs binding each captured tool alone
/// and every tool of a `tools/list` page together (real schemas, as `mcp-tools` prints
/// them).
fn host_config(captures: &[Capture], examples: &[String]) -> BTreeSet<Vec<u8>> {
    let mut seeds: BTreeSet<Vec<u8>> = examples.iter().map(|e| e.clone().into_bytes()).collect();
    for tools in listed_tools(captures).map(|(_, tools)| tools) {
        let bindings: Vec<Value> = tools.iter().map(binding).collect();
        for one in &bindings {
            seeds.insert(json!({ "tools": [one] }).to_string().into_bytes());
        }
        seeds.insert(json!({ "tools": bindings }).to_string().into_bytes());
    }
    seeds
}

/// The config form of a binding for one listed MCP tool.
fn binding(tool: &Value) -> Value {
    let name: String = tool["name"]
        .as_str()
        .unwrap_or("tool")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let mut binding = json!({
        "name": name,
        "description": tool["description"].as_str().unwrap_or_default(),
        "input_schema": tool["inputSchema"],
        "url": "https://mcp.example.com/mcp",
        "mcp_tool": tool["name"],
        "tenants": ["local"],
    });
    if let Some(output) = tool.get("outputSchema") {
        binding["output_schema"] = output.clone();
    }
    binding
}

/// `header_value`: the strings and argument objects of every captured `tools/call`, and
/// each listed tool's schema with its simple properties annotated, paired with the
/// arguments of a captured call of that tool (`[schema, arguments]`).
fn header_value(captures: &[Capture]) -> BTreeSet<Vec<u8>> {
    let mut seeds = BTreeSet::new();
    let calls: Vec<(&str, Value)> = captures
        .iter()
        .flat_map(|c| c.messages.iter().map(move |m| (c.peer.as_str(), m)))
        .filter(|(_, m)| m.sent && m.text.contains("\"tools/call\""))
        .filter_map(|(peer, m)| Some((peer, serde_json::from_str(&m.member("params")?).ok()?)))
        .collect();
    for (_, params) in &calls {
        let arguments = &params["arguments"];
        seeds.insert(arguments.to_string().into_bytes());
        let mut strings = Vec::new();
        string_leaves(params, &mut strings);
        seeds.extend(strings.into_iter().map(String::into_bytes));
    }
    for (peer, tools) in listed_tools(captures) {
        for tool in tools {
            let arguments = calls
                .iter()
                .find(|(p, params)| *p == peer && params["name"] == tool["name"])
                .map_or_else(|| json!({}), |(_, params)| params["arguments"].clone());
            let schema = annotated(&tool["inputSchema"]);
            seeds.insert(json!([schema, arguments]).to_string().into_bytes());
        }
    }
    seeds
}

/// `schema` with `x-mcp-header` on each top-level string, integer or boolean property,
/// named after the property.
pub(super) fn annotated(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let simple = matches!(
                property.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            );
            let header: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
            if let (true, false, Value::Object(property)) = (simple, header.is_empty(), property) {
                property.insert("x-mcp-header".into(), Value::String(header));
            }
        }
    }
    schema
}

/// Every string in `value` (keys included).
fn string_leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| string_leaves(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                string_leaves(v, out);
            }
        }
        _ => {}
    }
}

/// The tools of every captured `tools/list` page, with the peer that listed them.
fn listed_tools(captures: &[Capture]) -> impl Iterator<Item = (&str, Vec<Value>)> {
    captures.iter().flat_map(|c| {
        c.messages
            .iter()
            .filter(|m| !m.sent)
            .filter_map(|m| serde_json::from_str::<Map<String, Value>>(&m.member("result")?).ok())
            .filter_map(|result| match result.get("tools") {
                Some(Value::Array(tools)) => Some(tools.clone()),
                _ => None,
            })
            .map(move |tools| (c.peer.as_str(), tools))
    })
}

/// The ```` ```json ```` blocks of `docs/*.md` that are host configs (a document with
/// `tools`, or a bare array of bindings, which gets wrapped in one).
fn doc_examples(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join("docs");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut examples = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page)
            .map_err(|e| format!("cannot read {}: {e}", page.display()))?;
        for block in json_blocks(&text) {
            match serde_json::from_str::<Value>(block) {
                Ok(Value::Object(doc)) if doc.contains_key("tools") => {
                    examples.push(block.to_owned());
                }
                Ok(Value::Array(_)) => examples.push(format!("{{\"tools\": {block}}}")),
                _ => {}
            }
        }
    }
    Ok(examples)
}

/// The bodies of the ```` ```json ```` fenced blocks of a Markdown page.
pub(super) fn json_blocks(markdown: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = markdown;
    while let Some(start) = rest.find("```json\n") {
        let body = &rest[start + "```json\n".len()..];
        let Some(end) = body.find("```") else {
            break;
        };
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    blocks
}
