//! A streamed load reads each binding's members straight from the text (strings borrowed
//! where they hold no escape): it must decide exactly as a load of the parsed value does.

use serde_json::Value;

use super::*;
use crate::config::{error, repeats};

/// The streamed load's verdict on `text`, and the whole-value load's, as text.
fn both(text: &str) -> (Result<Vec<Binding>, String>, Result<Vec<Binding>, String>) {
    let verdict = |loaded: Result<HostConfig, ConfigErrors>| {
        loaded
            .map(|config| config.tools().iter().map(|t| (**t).clone()).collect())
            .map_err(|e| e.to_string())
    };
    let value: Value = serde_json::from_str(text).expect("valid JSON");
    (
        verdict(HostConfig::load(text)),
        verdict(HostConfig::from_value(&value)),
    )
}

#[test]
fn escaped_keys_and_strings_read_as_their_values() {
    // Escapes make serde_json hand over an owned copy instead of a borrowed slice; the
    // binding must come out the same either way.
    let text = r#"{"tools": [{
        "n\u0061me": "se\u0061rch",
        "description": "Line one.\nLine \"two\" \u00e9.",
        "input_schema": {"type": "object"},
        "url": "https:\/\/example.com\/mcp",
        "mcp_tool": "find\u005fall",
        "token_env": "MCP_\u0041PI_KEY",
        "tenants": ["ac\u006de", "globex"],
        "headers": {"X-Te\u0061m": "bl\u0075e"}
    }]}"#;
    let (streamed, whole) = both(text);
    let tools = streamed.expect("loads");
    assert_eq!(Ok(tools.clone()), whole);
    let tool = &tools[0];
    assert_eq!(tool.name(), "search");
    assert_eq!(tool.description(), "Line one.\nLine \"two\" \u{e9}.");
    assert_eq!(tool.url(), Some("https://example.com/mcp"));
    assert_eq!(tool.tenants(), ["acme", "globex"]);
}

#[test]
fn wrong_types_and_unknown_fields_are_reported_as_for_a_value() {
    // Every member in the wrong shape, in an order unlike the sorted one a JSON value
    // keeps: the errors, and their order, must be the whole-value load's.
    let text = r#"{"tools": [{
        "zeta": 1,
        "name": 5,
        "description": ["d"],
        "input_schema": "text",
        "output_schema": 3,
        "url": {"u": 1},
        "mcp_tool": true,
        "token_env": null,
        "tenants": "acme",
        "timeout_seconds": "5",
        "max_output_bytes": 1.5,
        "inspect_session": "yes",
        "headers": ["X-A"],
        "alpha": {},
        "zz": "x"
    }]}"#;
    let (streamed, whole) = both(text);
    let streamed = streamed.expect_err("refused");
    assert_eq!(Err(streamed.clone()), whole);
    for line in [
        "tools[0].name: must be a string",
        "tools[0].input_schema: must be a JSON Schema object",
        "tools[0].output_schema: must be a JSON Schema object",
        "tools[0].tenants: must be an array of tenant names",
        "tools[0].timeout_seconds: must be an integer",
        "tools[0].inspect_session: must be a boolean",
    ] {
        assert!(streamed.contains(line), "{line} in {streamed}");
    }
    let alpha = streamed
        .find("tools[0].alpha: unknown field")
        .expect("alpha");
    let zeta = streamed.find("tools[0].zeta: unknown field").expect("zeta");
    let zz = streamed.find("tools[0].zz: unknown field").expect("zz");
    assert!(alpha < zeta && zeta < zz, "{streamed}");
}

#[test]
fn repeated_members_and_elements_that_are_no_objects() {
    // A member written twice counts once (its last value) and is reported; an element
    // that is not an object is reported and still searched for repeated keys.
    let binding = r#"{"name":"a","description":"d","input_schema":{"type":"object"},"url":"https://example.com/mcp","mcp_tool":"t","tenants":["x"]}"#;
    let twice = binding.replace(r#""name":"a","#, r#""name":"a","name":"b","#);
    let text = format!(r#"{{"tools": [{twice}, [{{"k": 1, "k": 2}}], "s", 1e300]}}"#);
    let errors = HostConfig::load(&text).unwrap_err().to_string();
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(
        lines,
        [
            "tools[0].name: duplicate field; only the last value would count",
            "tools[1][0].k: duplicate field; only the last value would count",
            "tools[1]: must be an object",
            "tools[2]: must be an object",
            "tools[3]: must be an object",
        ]
    );
    let (streamed, whole) = both(&format!(r#"{{"tools": [{twice}]}}"#));
    assert_eq!(whole.expect("a value keeps the last")[0].name(), "b");
    assert!(streamed.is_err());
}

/// A valid binding's members, to extend.
const BINDING: &str = r#""name":"a","description":"d","input_schema":{"type":"object"},"url":"https://example.com/mcp","mcp_tool":"t","tenants":["x"]"#;

#[test]
fn a_binding_of_many_members_is_read_whole_and_reported_in_bounds() {
    // 5,000 unknown members, with a repeat far past the first few: the repeat is found
    // (past the point where members are indexed) and the report stops at its limit.
    let extra: String = (0..5000).map(|i| format!(r#","k{i}":0"#)).collect();
    let text = format!(r#"{{"tools": [{{{BINDING}{extra},"k4321":1}}]}}"#);
    let errors = HostConfig::load(&text).unwrap_err();
    let lines: Vec<String> = errors.errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        lines[0],
        "tools[0].k4321: duplicate field; only the last value would count"
    );
    assert_eq!(lines.len(), error::MAX_LISTED + 1);
    assert_eq!(
        lines[1],
        "tools[0].k0: unknown field; expected one of: name, description, input_schema, url, mcp_tool, token_env, tenants, timeout_seconds, max_output_bytes, output_schema, inspect_session, headers, oauth, max_in_flight, task_support"
    );
    assert_eq!(
        lines[error::MAX_LISTED],
        format!("$: {} more problems, not listed", 5001 - error::MAX_LISTED)
    );
    // A parsed document's binding of as many members says the same.
    let value: Value = serde_json::from_str(&text).unwrap();
    let whole = HostConfig::from_value(&value).unwrap_err();
    assert_eq!(whole.errors().len(), error::MAX_LISTED + 1);
}

#[test]
fn repeated_keys_are_listed_up_to_a_limit_with_short_paths() {
    // Thousands of repeats under a long key: at most 100 paths, each with the key cut,
    // and a count of the rest at the value that held them.
    let long = "x".repeat(10_000);
    let repeats: String = (0..3000).map(|_| r#""k":0,"#).collect();
    let text = format!(r#"{{"tools": [{{{BINDING},"headers":{{"{long}":{{{repeats}"k":0}}}}}}]}}"#);
    let errors = HostConfig::load(&text).unwrap_err();
    let repeat_lines: Vec<&ConfigError> = errors
        .errors()
        .iter()
        .filter(|e| e.reason.starts_with("duplicate field"))
        .collect();
    assert_eq!(repeat_lines.len(), repeats::MAX_REPEAT_PATHS);
    let cut = format!(r#"tools[0].headers["{}…"].k"#, "x".repeat(64));
    assert!(repeat_lines.iter().all(|e| e.path == cut), "{errors}");
    let shown = errors.to_string();
    assert!(
        shown.ends_with("\n$: 2900 more duplicate fields, not listed"),
        "{shown}"
    );
    assert!(shown.len() < 100_000, "{} bytes", shown.len());
}

#[test]
fn a_root_key_written_twice_is_reported_once_for_each_problem() {
    let text = r#"{"tools": [], "x": 1, "x": 2, "x": 3}"#;
    let lines: Vec<String> = HostConfig::load(text)
        .unwrap_err()
        .errors()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "x: duplicate field; only the last value would count",
            "x: duplicate field; only the last value would count",
            "x: unknown field; expected one of: tools, allow_private_auth_destinations, token_store",
        ]
    );
}

#[test]
fn serde_json_reserved_keys_mean_what_serde_json_says() {
    // A number's reserved key holding no number is not valid JSON, as for serde_json,
    // wherever it stands; the raw-value key is refused everywhere.
    let number = r#""$serde_json::private::Number""#;
    let raw = r#""$serde_json::private::RawValue""#;
    for text in [
        format!(r#"{{"tools":[{{{number}:"abc"}}]}}"#),
        format!(r#"{{{number}:"abc"}}"#),
        format!(r#"{{"tools":{{{number}:"abc"}}}}"#),
        format!(r#"{{"tools":[{{{BINDING},"headers":{{{number}:"abc"}}}}]}}"#),
    ] {
        let said = HostConfig::load(&text).unwrap_err().to_string();
        assert!(said.starts_with("$: not valid JSON"), "{text}: {said}");
        assert!(said.contains("invalid number"), "{text}: {said}");
    }
    for text in [
        format!(r#"{{"tools":[{{{raw}:"{{}}"}}]}}"#),
        format!(r#"{{{raw}:"{{}}"}}"#),
        format!(r#"{{"tools":[{{{BINDING},"headers":{{{raw}:"1"}}}}]}}"#),
        format!(
            r#"{{"tools":[{{{BINDING},"output_schema":{{"type":"object","properties":{{{raw}:"x"}}}}}}]}}"#
        ),
    ] {
        let said = HostConfig::load(&text).unwrap_err().to_string();
        assert!(said.contains("is reserved"), "{text}: {said}");
    }
}

#[test]
fn odd_numbers_and_odd_schema_text_get_the_reason_that_fits() {
    let huge =
        format!(r#"{{"tools":[{{{BINDING},"timeout_seconds":123456789012345678901234567890}}]}}"#);
    let said = HostConfig::load(&huge).unwrap_err().to_string();
    assert_eq!(
        said,
        "tools[0].timeout_seconds: must be between 1 and 86400"
    );
    let surrogate = format!(
        r#"{{"tools":[{{{BINDING},"output_schema":{{"type":"object","title":"\ud800"}}}}]}}"#
    );
    let said = HostConfig::load(&surrogate).unwrap_err().to_string();
    assert!(
        said.starts_with("tools[0].output_schema: is not valid JSON: ") && !said.contains("column"),
        "{said}"
    );
}

#[test]
fn a_tools_object_is_read_as_any_other_object() {
    // `tools` must be an array; written as an object, it is still read like every other
    // object of the document, repeated keys included.
    let said = HostConfig::load(r#"{"tools": {"a": 1, "a": 2}}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        said,
        "tools.a: duplicate field; only the last value would count\ntools: must be an array of tool bindings"
    );
}
