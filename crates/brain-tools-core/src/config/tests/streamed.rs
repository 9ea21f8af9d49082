//! A streamed load reads each binding's members straight from the text (strings borrowed
//! where they hold no escape): it must decide exactly as a load of the parsed value does.

use serde_json::Value;

use super::*;

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
    let text = format!(r#"{{"tools": [{twice}, [{{"k": 1, "k": 2}}], "s", 1e400]}}"#);
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
