//! Every load-time rule, with its exact message.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;

fn mcp(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Search the knowledge base.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "url": "https://example.com/mcp",
        "mcp_tool": "search",
        "token_env": "MCP_API_KEY",
        "tenants": ["local"],
        "timeout_seconds": 300,
        "max_output_bytes": 1048576
    })
}

fn with(mut binding: Value, key: &str, value: Value) -> Value {
    binding[key] = value;
    binding
}

fn without(mut binding: Value, key: &str) -> Value {
    binding.as_object_mut().unwrap().remove(key);
    binding
}

/// Loads a config of these bindings and returns its error lines.
fn errors_of(tools: Vec<Value>) -> Vec<String> {
    let errors = HostConfig::from_value(&json!({ "tools": tools })).unwrap_err();
    errors.errors().iter().map(ToString::to_string).collect()
}

fn one_error(binding: Value) -> String {
    let errors = errors_of(vec![mcp("ok"), binding]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.into_iter().next().unwrap()
}

#[test]
fn a_discovered_binding_loads_with_its_fields() {
    let config = HostConfig::from_value(&json!({"tools": [mcp("search")]})).unwrap();
    let binding = config.get("search").unwrap();
    assert!(binding.is_mcp());
    assert_eq!(binding.url(), Some("https://example.com/mcp"));
    let mcp = binding.mcp().unwrap();
    assert_eq!(mcp.tool(), "search");
    assert_eq!(mcp.url().origin(), "https://example.com");
    assert_eq!(binding.token_env(), Some("MCP_API_KEY"));
    assert_eq!(binding.tenants(), ["local"]);
    assert_eq!(binding.timeout(), Duration::from_secs(300));
    assert_eq!(binding.max_output_bytes(), 1_048_576);
    assert!(!binding.inspect_session());
    assert!(binding.output_schema().is_none());
    assert!(config.get("other").is_none());
    assert_eq!(config.tools().len(), 1);
}

#[test]
fn defaults_apply() {
    let binding = without(without(mcp("a"), "timeout_seconds"), "max_output_bytes");
    let binding = Binding::from_value(&binding).unwrap();
    assert_eq!(binding.timeout(), Duration::from_secs(300));
    assert_eq!(binding.max_output_bytes(), 1024 * 1024);
}

#[test]
fn http_bindings_load_too() {
    let http = json!({
        "name": "weather",
        "description": "Weather.",
        "input_schema": {"type": "object"},
        "url": "http://weather.internal/v1",
        "tenants": ["a", "b"],
        "inspect_session": true
    });
    let no_url = json!({
        "name": "local",
        "description": "",
        "input_schema": {"type": "object"},
        "tenants": ["a"]
    });
    let config = HostConfig::from_value(&json!({"tools": [http, no_url]})).unwrap();
    let weather = config.get("weather").unwrap();
    assert!(!weather.is_mcp());
    assert!(weather.mcp().is_none());
    assert!(weather.inspect_session());
    assert_eq!(weather.url(), Some("http://weather.internal/v1"));
    assert!(config.get("local").unwrap().url().is_none());
}

#[test]
fn load_parses_text_and_reports_bad_json() {
    let text = serde_json::to_string(&json!({"tools": [mcp("search")]})).unwrap();
    assert!(HostConfig::load(&text).is_ok());
    let error = HostConfig::load("{\n  \"tools\": [,]\n}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "$: not valid JSON at line 2 column 13: expected value"
    );
    assert_eq!(
        HostConfig::load("[]").unwrap_err().to_string(),
        "$: must be a JSON object with a \"tools\" array"
    );
}

#[test]
fn load_path_reads_files_and_names_missing_ones() {
    let dir = std::env::temp_dir().join(format!("brain-tools-core-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("host.json");
    std::fs::write(&file, json!({"tools": [mcp("search")]}).to_string()).unwrap();
    assert!(
        HostConfig::load_path(&file)
            .unwrap()
            .get("search")
            .is_some()
    );
    let missing = dir.join("nope.json");
    let error = HostConfig::load_path(&missing).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("$: cannot read {}: ", missing.display())),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicate_fields_are_reported_with_the_rest() {
    let text = r#"{"tools": [{"name": "a", "description": "", "tenants": ["t"],
        "input_schema": {"type": "object"}, "timeout_seconds": 5, "timeout_seconds": 0}]}"#;
    assert_eq!(
        HostConfig::load(text).unwrap_err().to_string(),
        "tools[0].timeout_seconds: duplicate field; only the last value would count\n\
         tools[0].timeout_seconds: must be between 1 and 86400"
    );
}

#[test]
fn root_rules() {
    let error = HostConfig::from_value(&json!({})).unwrap_err();
    assert_eq!(error.to_string(), "tools: required field is missing");
    let error = HostConfig::from_value(&json!({"tools": {}})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tools: must be an array of tool bindings"
    );
    let error = HostConfig::from_value(&json!({"tools": [], "tool": []})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool: unknown field; did you mean \"tools\"?"
    );
    let error = HostConfig::from_value(&json!({"tools": [5]})).unwrap_err();
    assert_eq!(error.to_string(), "tools[0]: must be an object");
    assert!(
        HostConfig::from_value(&json!({"tools": []}))
            .unwrap()
            .tools()
            .is_empty()
    );
}

#[test]
fn private_auth_destinations_are_refused_unless_the_root_allows_them() {
    let load = |text: &str| HostConfig::load(text);
    assert!(
        !load(r#"{"tools": []}"#)
            .unwrap()
            .allow_private_auth_destinations()
    );
    for (text, want) in [
        (
            r#"{"tools": [], "allow_private_auth_destinations": true}"#,
            true,
        ),
        (
            r#"{"allow_private_auth_destinations": false, "tools": []}"#,
            false,
        ),
    ] {
        assert_eq!(
            load(text).unwrap().allow_private_auth_destinations(),
            want,
            "{text}"
        );
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            HostConfig::from_value(&value)
                .unwrap()
                .allow_private_auth_destinations(),
            want
        );
    }
    let error = load(r#"{"tools": [], "allow_private_auth_destinations": "yes"}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "allow_private_auth_destinations: must be true or false"
    );
    let error = HostConfig::from_value(&json!({"tools": [], "allow_private_auth_destinations": 1}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "allow_private_auth_destinations: must be true or false"
    );
}

#[test]
fn inspect_session_is_refused_on_mcp_bindings() {
    for value in [true, false] {
        assert_eq!(
            one_error(with(mcp("x"), "inspect_session", json!(value))),
            "tools[1].inspect_session: not allowed on an MCP binding (mcp_tool is set)"
        );
    }
    assert_eq!(
        errors_of(vec![with(
            without(mcp("x"), "mcp_tool"),
            "inspect_session",
            json!("yes")
        )]),
        ["tools[0].inspect_session: must be a boolean"]
    );
}

#[test]
fn duplicate_names_point_at_the_first_use() {
    let errors = errors_of(vec![mcp("a"), mcp("b"), mcp("a")]);
    assert_eq!(
        errors,
        ["tools[2].name: duplicate name \"a\" (first used at tools[0].name)"]
    );
}

#[test]
fn invalid_names() {
    for bad in ["", "has space", "dots.not.allowed", "ünï"] {
        assert_eq!(
            one_error(mcp(bad)),
            "tools[1].name: must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"
        );
    }
    assert_eq!(
        one_error(with(mcp("x"), "name", json!(7))),
        "tools[1].name: must be a string"
    );
    assert_eq!(
        one_error(without(mcp("x"), "name")),
        "tools[1].name: required field is missing"
    );
}

#[test]
fn tenants_rules() {
    assert_eq!(
        one_error(with(mcp("x"), "tenants", json!([]))),
        "tools[1].tenants: must not be empty: list the tenants allowed to call the tool"
    );
    assert_eq!(
        one_error(without(mcp("x"), "tenants")),
        "tools[1].tenants: required field is missing"
    );
    assert_eq!(
        one_error(with(mcp("x"), "tenants", json!("local"))),
        "tools[1].tenants: must be an array of tenant names"
    );
    let errors = errors_of(vec![with(mcp("x"), "tenants", json!(["a", "", 3, "a"]))]);
    assert_eq!(
        errors,
        [
            "tools[0].tenants[1]: must not be empty",
            "tools[0].tenants[2]: must be a string",
            "tools[0].tenants[3]: duplicate tenant \"a\"",
        ]
    );
}

#[test]
fn schemas_must_compile() {
    assert_eq!(
        one_error(with(
            mcp("x"),
            "input_schema",
            json!({"type": "object", "minProperties": "two"})
        )),
        "tools[1].input_schema: is not a valid JSON Schema: \"two\" is not of type \"integer\""
    );
    assert_eq!(
        one_error(with(mcp("x"), "output_schema", json!({"type": 12}))),
        "tools[1].output_schema: is not a valid JSON Schema: 12 is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
    assert_eq!(
        one_error(with(mcp("x"), "input_schema", json!(true))),
        "tools[1].input_schema: must be a JSON Schema object"
    );
    assert_eq!(
        one_error(without(mcp("x"), "input_schema")),
        "tools[1].input_schema: required field is missing"
    );
    assert_eq!(
        one_error(with(mcp("x"), "input_schema", json!({"type": "string"}))),
        "tools[1].input_schema.type: must be \"object\": tool arguments are always a JSON object"
    );
    assert_eq!(
        one_error(with(mcp("x"), "input_schema", json!({"properties": {}}))),
        "tools[1].input_schema: must have \"type\": \"object\""
    );
}

#[test]
fn remote_refs_are_refused_not_fetched() {
    let error = one_error(with(
        mcp("x"),
        "input_schema",
        json!({"type": "object", "properties": {"a": {"$ref": "https://schemas.example/a.json"}}}),
    ));
    assert!(
        error.starts_with("tools[1].input_schema: is not a valid JSON Schema: "),
        "{error}"
    );
    assert!(error.contains("https://schemas.example/a.json"), "{error}");
}

#[test]
fn dollar_schema_is_honoured() {
    // Draft 4 has boolean `exclusiveMinimum`; 2020-12 would reject `true` there.
    let draft4 = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}
    });
    let binding = Binding::from_value(&with(mcp("x"), "input_schema", draft4.clone())).unwrap();
    assert!(binding.validate_arguments(&json!({"n": 0})).is_err());
    assert!(binding.validate_arguments(&json!({"n": 1})).is_ok());
    let as_2020 = without(draft4, "$schema");
    let error = one_error(with(mcp("x"), "input_schema", as_2020));
    assert!(
        error.starts_with("tools[1].input_schema: is not a valid JSON Schema: "),
        "{error}"
    );
}

#[test]
fn urls_must_be_http_or_https() {
    assert_eq!(
        one_error(with(mcp("x"), "url", json!("ftp://example.com/mcp"))),
        "tools[1].url: must be an http or https URL"
    );
    assert_eq!(
        one_error(with(
            mcp("x"),
            "url",
            json!("https://user:pw@example.com/mcp")
        )),
        "tools[1].url: must not contain credentials; use token_env"
    );
    assert_eq!(
        one_error(without(mcp("x"), "url")),
        "tools[1].url: required for an MCP binding (mcp_tool is set)"
    );
    assert_eq!(
        one_error(with(mcp("x"), "url", json!(null))),
        "tools[1].url: must be a string"
    );
}

#[test]
fn limits_must_be_sane() {
    for bad in [0, -1, 86_401, 1_000_000_000] {
        assert_eq!(
            one_error(with(mcp("x"), "timeout_seconds", json!(bad))),
            "tools[1].timeout_seconds: must be between 1 and 86400"
        );
    }
    // An integer as JSON Schema counts one, written with an exponent.
    assert_eq!(
        one_error(with(mcp("x"), "timeout_seconds", json!(1e30))),
        "tools[1].timeout_seconds: must be between 1 and 86400"
    );
    for bad in [0, -5, 67_108_865] {
        assert_eq!(
            one_error(with(mcp("x"), "max_output_bytes", json!(bad))),
            "tools[1].max_output_bytes: must be between 1 and 67108864"
        );
    }
    for bad in [json!(1.5), json!("30"), json!(null)] {
        assert_eq!(
            one_error(with(mcp("x"), "timeout_seconds", bad)),
            "tools[1].timeout_seconds: must be an integer"
        );
    }
    let edge = with(
        with(mcp("x"), "timeout_seconds", json!(86_400)),
        "max_output_bytes",
        json!(1),
    );
    assert_eq!(
        Binding::from_value(&edge).unwrap().timeout,
        Duration::from_secs(86_400)
    );
}

#[test]
fn token_env_must_be_a_variable_name() {
    for bad in ["MCP-API-KEY", "1KEY", "", "A B", "$KEY"] {
        assert_eq!(
            one_error(with(mcp("x"), "token_env", json!(bad))),
            "tools[1].token_env: must be an environment variable name: a letter or _, then letters, digits and _"
        );
    }
    let no_token = Binding::from_value(&without(mcp("x"), "token_env")).unwrap();
    assert!(no_token.token_env.is_none());
}

#[test]
fn mcp_tool_rules() {
    assert_eq!(
        one_error(with(mcp("x"), "mcp_tool", json!(""))),
        "tools[1].mcp_tool: must not be empty"
    );
    assert_eq!(
        one_error(with(mcp("x"), "mcp_tool", json!(["search"]))),
        "tools[1].mcp_tool: must be a string"
    );
    assert!(Binding::from_value(&with(mcp("x"), "mcp_tool", json!("get tiny image"))).is_ok());
}

#[test]
fn description_rules() {
    assert_eq!(
        one_error(without(mcp("x"), "description")),
        "tools[1].description: required field is missing"
    );
    assert_eq!(
        one_error(with(mcp("x"), "description", json!({}))),
        "tools[1].description: must be a string"
    );
}

#[test]
fn unknown_fields_get_suggestions() {
    let typo = with(
        without(mcp("x"), "timeout_seconds"),
        "timout_seconds",
        json!(30),
    );
    assert_eq!(
        one_error(typo),
        "tools[1].timout_seconds: unknown field; did you mean \"timeout_seconds\"?"
    );
    assert_eq!(
        one_error(with(mcp("x"), "inputSchema", json!({}))),
        "tools[1].inputSchema: unknown field; did you mean \"input_schema\"?"
    );
    assert_eq!(
        one_error(with(mcp("x"), "colour", json!("red"))),
        "tools[1].colour: unknown field; expected one of: name, description, input_schema, url, \
         mcp_tool, token_env, tenants, timeout_seconds, max_output_bytes, output_schema, inspect_session, headers, oauth, max_in_flight, task_support"
    );
}

#[test]
fn all_errors_are_reported_at_once() {
    let bad_one = json!({
        "name": "bad name",
        "description": "d",
        "input_schema": {"type": "object"},
        "url": "gopher://x",
        "mcp_tool": "t",
        "tenants": [],
        "timeout_seconds": 0,
        "timout": 1
    });
    let bad_two = with(mcp("y"), "max_output_bytes", json!(0));
    let errors = HostConfig::from_value(&json!({"tools": [bad_one, bad_two], "extra": 1}))
        .unwrap_err()
        .to_string();
    assert_eq!(
        errors,
        "tools[0].name: must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -\n\
         tools[0].url: must be an http or https URL\n\
         tools[0].tenants: must not be empty: list the tenants allowed to call the tool\n\
         tools[0].timeout_seconds: must be between 1 and 86400\n\
         tools[0].timout: unknown field; expected one of: name, description, input_schema, url, \
         mcp_tool, token_env, tenants, timeout_seconds, max_output_bytes, output_schema, inspect_session, headers, oauth, max_in_flight, task_support\n\
         tools[1].max_output_bytes: must be between 1 and 67108864\n\
         extra: unknown field; expected one of: tools, allow_private_auth_destinations, token_store"
    );
}

#[test]
fn single_binding_paths_are_relative() {
    let error = Binding::from_value(&with(mcp("x"), "timeout_seconds", json!(0))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "timeout_seconds: must be between 1 and 86400"
    );
    let error = Binding::from_value(&json!([])).unwrap_err();
    assert_eq!(error.to_string(), "$: must be an object");
}

#[test]
fn bindings_round_trip_through_their_config_form() {
    let full = with(mcp("x"), "output_schema", json!({"type": "object"}));
    let binding = Binding::from_value(&full).unwrap();
    assert_eq!(binding.to_value(), full);
    assert_eq!(Binding::from_value(&binding.to_value()).unwrap(), binding);
}

#[test]
fn shared_schemas_compile_once() {
    let config = HostConfig::from_value(&json!({"tools": [mcp("a"), mcp("b")]})).unwrap();
    let a = config.get("a").unwrap().input_validator();
    let b = config.get("b").unwrap().input_validator();
    assert!(a.shares_compiled_form(b));
}

#[test]
fn equal_schemas_share_one_copy_whatever_their_key_order() {
    let schema = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    let one =
        schema(r#"{"type": "object", "properties": {"q": {"type": "string", "maxLength": 9}}}"#);
    let two =
        schema(r#"{"properties": {"q": {"maxLength": 9, "type": "string"}}, "type": "object"}"#);
    let other =
        schema(r#"{"type": "object", "properties": {"q": {"type": "string", "maxLength": 8}}}"#);
    let text = json!({"tools": [
        with(mcp("a"), "input_schema", one),
        with(with(mcp("b"), "input_schema", two), "output_schema", json!({"type": "object"})),
        with(with(mcp("c"), "input_schema", other), "output_schema", json!({"type": "object"})),
    ]})
    .to_string();
    let config = HostConfig::load(&text).unwrap();
    let (a, b, c) = (
        config.get("a").unwrap(),
        config.get("b").unwrap(),
        config.get("c").unwrap(),
    );
    assert!(Arc::ptr_eq(&a.input_schema, &b.input_schema));
    assert!(
        a.input_validator()
            .shares_compiled_form(b.input_validator())
    );
    assert!(!Arc::ptr_eq(&a.input_schema, &c.input_schema));
    assert!(
        !a.input_validator()
            .shares_compiled_form(c.input_validator())
    );
    let (b_out, c_out) = (
        b.output_schema.as_ref().unwrap(),
        c.output_schema.as_ref().unwrap(),
    );
    assert!(Arc::ptr_eq(b_out, c_out));
}

#[test]
fn streamed_and_whole_loads_agree() {
    let document = json!({"tools": [mcp("a"), with(mcp("b"), "timeout_seconds", json!(7))]});
    let streamed = HostConfig::load(&document.to_string()).unwrap();
    let whole = HostConfig::from_value(&document).unwrap();
    assert_eq!(streamed.tools(), whole.tools());
    let broken = json!({"tools": [with(mcp("a"), "timeout_seconds", json!(0)), mcp("a")], "x": 1});
    assert_eq!(
        HostConfig::load(&broken.to_string())
            .unwrap_err()
            .to_string(),
        HostConfig::from_value(&broken).unwrap_err().to_string()
    );
}

mod headers;
mod limits;
mod oauth;
mod properties;
mod schema_text;
mod store;
mod streamed;
mod task_support;

#[test]
fn a_url_named_by_many_bindings_is_checked_for_each() {
    // The load remembers accepted URLs; a refused one is still reported at every binding.
    let bad = "https://exa mple.com/mcp";
    let errors = errors_of(vec![
        with(mcp("a"), "url", json!(bad)),
        mcp("b"),
        with(mcp("c"), "url", json!(bad)),
    ]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("tools[0].url: "), "{errors:?}");
    assert!(errors[1].starts_with("tools[2].url: "), "{errors:?}");
    let text = json!({"tools": [mcp("a"), mcp("b")]}).to_string();
    let config = HostConfig::load(&text).expect("loads");
    let urls: Vec<_> = config.tools().iter().map(|t| t.url()).collect();
    assert_eq!(urls, vec![Some("https://example.com/mcp"); 2]);
}
