//! A realistic, reproducible host config of any size for the load benchmark.
//!
//! Bindings spread over 200 MCP servers. Their input schemas are drawn from `n / 10`
//! distinct schemas, skewed so a few are very common (as `{query, limit}`-style tools are)
//! and many are rare; 30% of bindings have an output schema drawn from `n / 40` distinct
//! ones. Schemas are about 0.3 to 2 KiB of JSON: described properties of every common kind
//! (strings with formats and patterns, enums, bounded integers, booleans, arrays, nested
//! objects with their own required lists), as real MCP servers publish them.

use serde_json::{Map, Value, json};

/// A small deterministic generator (SplitMix64), so every run loads the same config.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.below(list.len())]
    }
}

const NAMES: &[&str] = &[
    "query",
    "limit",
    "cursor",
    "repository",
    "owner",
    "branch",
    "path",
    "content",
    "message",
    "labels",
    "assignees",
    "state",
    "sort",
    "direction",
    "since",
    "until",
    "page",
    "per_page",
    "include_archived",
    "filters",
    "fields",
    "timezone",
    "start_time",
    "end_time",
    "attendees",
    "channel",
    "thread_ts",
    "text",
    "user_id",
    "email",
    "project_key",
    "issue_type",
    "priority",
    "summary",
    "parent",
    "tags",
    "metadata",
    "format",
    "language",
    "dry_run",
    "timeout_ms",
    "region",
    "bucket",
    "key",
    "version",
    "environment",
    "namespace",
    "workspace_id",
    "title",
];

const WORDS: &[&str] = &[
    "the",
    "identifier",
    "of",
    "resource",
    "to",
    "return",
    "results",
    "when",
    "set",
    "only",
    "matching",
    "items",
    "are",
    "included",
    "in",
    "response",
    "maximum",
    "number",
    "defaults",
    "used",
    "for",
    "pagination",
    "from",
    "previous",
    "page",
    "ISO",
    "8601",
    "timestamp",
    "filter",
    "by",
    "owner",
    "name",
    "case-insensitive",
    "optional",
    "must",
    "be",
    "unique",
    "within",
    "project",
    "value",
    "ignored",
    "if",
    "empty",
    "sorted",
    "ascending",
    "order",
    "user",
];

fn sentence(r: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(r.pick(WORDS));
    }
    s.push('.');
    s
}

/// One property schema; `depth` limits nesting.
fn property(r: &mut Rng, depth: usize) -> Value {
    let words = 3 + r.below(10);
    let description = sentence(r, words);
    match r.below(if depth == 0 { 12 } else { 6 }) {
        0 | 1 => {
            let mut p = json!({"type": "string", "description": description});
            match r.below(4) {
                0 => p["format"] = json!(r.pick(&["date-time", "email", "uri", "uuid"])),
                1 => p["pattern"] = json!("^[A-Za-z0-9_.-]+$"),
                2 => p["maxLength"] = json!(64 << r.below(6)),
                _ => {}
            }
            p
        }
        2 => {
            let values: Vec<String> = (0..3 + r.below(5))
                .map(|i| format!("{}_{i}", r.pick(NAMES)))
                .collect();
            json!({"type": "string", "enum": values, "description": description})
        }
        3 => {
            json!({"type": "integer", "minimum": r.below(2), "maximum": 10 * (1 + r.below(100)), "default": 1 + r.below(50), "description": description})
        }
        4 => json!({"type": "boolean", "default": r.below(2) == 0, "description": description}),
        5 => {
            json!({"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 10 + r.below(90), "uniqueItems": r.below(2) == 0, "description": description})
        }
        6 => {
            let props = 2 + r.below(3);
            object(r, depth + 1, props, description)
        }
        7 => {
            let (props, text) = (2 + r.below(2), sentence(r, 4));
            json!({"type": "array", "items": object(r, depth + 1, props, text), "description": description})
        }
        _ => json!({"type": "string", "description": description}),
    }
}

fn object(r: &mut Rng, depth: usize, props: usize, description: String) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    while properties.len() < props {
        let name = r.pick(NAMES);
        if properties.contains_key(name) {
            continue;
        }
        properties.insert(name.to_owned(), property(r, depth));
        if r.below(3) == 0 {
            required.push(name);
        }
    }
    let mut o = json!({"type": "object", "description": description, "properties": properties});
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    if r.below(2) == 0 {
        o["additionalProperties"] = json!(false);
    }
    o
}

/// Distinct schema number `k`, the same on every call.
fn schema(k: usize, output: bool) -> Value {
    let mut r = Rng(k as u64 * 2 + u64::from(output));
    let props = 1 + r.below(7);
    let text = sentence(&mut r, 8);
    let mut s = object(&mut r, 0, props, text);
    if let Some(o) = s.as_object_mut() {
        o.remove("description");
    }
    s
}

/// An index in `0..n` skewed towards small numbers (a few schemas are very common).
fn skewed(r: &mut Rng, n: usize) -> usize {
    ((n as f64) * r.unit().powi(3)) as usize
}

/// The host config text with `n` bindings.
pub(crate) fn host_config(n: usize) -> String {
    let mut r = Rng(42);
    let (inputs, outputs) = ((n / 10).max(1), (n / 40).max(1));
    let tenants = [
        "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell",
    ];
    let mut tools = Vec::with_capacity(n);
    for i in 0..n {
        let server = i % 200;
        let verb = r.pick(&[
            "get", "list", "create", "update", "search", "delete", "sync",
        ]);
        let noun = r.pick(NAMES);
        let words = 8 + r.below(30);
        let description = sentence(&mut r, words);
        let mut b = json!({
            "name": format!("s{server}_{verb}_{noun}_{i}"),
            "description": description,
            "input_schema": schema(skewed(&mut r, inputs), false),
            "url": format!("https://mcp-{server}.tools.example.internal/mcp"),
            "mcp_tool": format!("{verb}_{noun}"),
            "tenants": (0..1 + r.below(4)).map(|t| tenants[(server + t) % tenants.len()]).collect::<Vec<_>>(),
            "timeout_seconds": 30 * (1 + r.below(10)),
        });
        if r.below(10) < 3 {
            b["output_schema"] = schema(skewed(&mut r, outputs), true);
        }
        if r.below(2) == 0 {
            b["token_env"] = json!(format!("MCP_TOKEN_{server}"));
        }
        tools.push(b);
    }
    json!({"tools": tools}).to_string()
}
