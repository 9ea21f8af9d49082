//! Unit tests of discovery's checks and selection.

use brain_mcp_proto::client::Framing;

use super::pages::{Collected, Wanted};
use super::select::select;
use super::*;

fn request(tools: &[&str]) -> Request {
    Request {
        url: "http://127.0.0.1:9/mcp".into(),
        token_env: None,
        oauth: None,
        tenant: "local".into(),
        tools: tools.iter().map(|s| (*s).to_owned()).collect(),
        deadline: DEFAULT_DEADLINE,
    }
}

#[test]
fn checks_before_sending() {
    assert_eq!(
        check(&request(&[])).expect_err("empty").to_string(),
        "the tool list is empty: name 1 to 128 tools"
    );
    let many: Vec<String> = (0..129).map(|i| format!("t{i}")).collect();
    let names: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(
        check(&request(&names)).expect_err("too many").to_string(),
        "129 tools named: at most 128 are allowed"
    );
    assert_eq!(
        check(&request(&["a", "b", "a"]))
            .expect_err("repeat")
            .to_string(),
        "tool \"a\" is named more than once"
    );
    let mut bad_url = request(&["a"]);
    bad_url.url = "mailto:x".into();
    assert_eq!(
        check(&bad_url).expect_err("url").to_string(),
        "the URL must be an http or https URL"
    );
    let mut unset = request(&["a"]);
    unset.token_env = Some("BRAIN_TEST_SURELY_UNSET_VARIABLE".into());
    assert!(
        check(&unset)
            .expect_err("unset token")
            .to_string()
            .contains("BRAIN_TEST_SURELY_UNSET_VARIABLE")
    );
}

fn tool(name: &str, schema: &str) -> Tool {
    serde_json::from_str(&format!(
        r#"{{"name":"{name}","description":"d {name}","inputSchema":{schema}}}"#
    ))
    .expect("a valid tool")
}

fn listed(request: &Request, era: Era, tools: Vec<Tool>) -> Collected {
    let mut collected = Collected::new(Wanted::Named(request.tools.clone()));
    collected.add_page(&Framing::for_era(era), tools);
    collected
}

fn pick(names: &[&str], era: Era, tools: Vec<Tool>) -> Result<Discovered, DiscoverError> {
    let request = request(names);
    select(
        &secrets(),
        &request,
        era,
        listed(&request, era, tools),
        later(),
    )
}

#[test]
fn selects_in_order_and_names_missing_tools() {
    let tools = vec![
        tool("echo", r#"{"type":"object"}"#),
        tool("get-sum", r#"{"type":"object"}"#),
        tool("echo", r#"{"type":"object","title":"second"}"#),
    ];
    let found = pick(&["get-sum", "echo"], Era::Handshake, tools).expect("found");
    let names: Vec<&str> = found.bindings.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["get-sum", "echo"]);
    assert_eq!(
        found.bindings[1].input_schema.get(),
        r#"{"type":"object"}"#,
        "the first listing of a repeated name wins"
    );
    let tools = vec![tool("echo", r#"{"type":"object"}"#)];
    let err = pick(&["ecko", "zzz"], Era::Handshake, tools).expect_err("missing");
    assert_eq!(
        err.to_string(),
        "the server has no tool named \"ecko\" (did you mean \"echo\"?), \"zzz\""
    );
    assert_eq!(err.kind(), DiscoverErrorKind::Missing);
    assert_eq!(err.names(), ["ecko", "zzz"]);
    let err = pick(&["echo"], Era::Handshake, Vec::new()).expect_err("empty server");
    assert_eq!(
        err.to_string(),
        "the server has no tool named \"echo\" (its tool list is empty)"
    );
}

#[test]
fn pages_add_up() {
    let request = request(&["b", "a"]);
    let mut collected = Collected::new(Wanted::Named(request.tools.clone()));
    let object = r#"{"type":"object"}"#;
    let session = Framing::before_session();
    collected.add_page(&session, vec![tool("a", object)]);
    collected.add_page(&session, vec![tool("x", object), tool("b", object)]);
    assert_eq!(collected.total, 3);
    assert_eq!(collected.names, ["a", "x", "b"]);
    let found =
        select(&secrets(), &request, Era::Handshake, collected, later()).expect("both found");
    let names: Vec<&str> = found.bindings.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["b", "a"]);
}

#[test]
fn invalid_param_headers_hide_tools_in_the_stateless_era_only() {
    let bad = r#"{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}"#;
    let v = brain_mcp_proto::version::ProtocolVersion::V2026_07_28;
    let err = pick(&["t"], Era::Stateless(v), vec![tool("t", bad)]).expect_err("hidden");
    assert!(
        err.to_string()
            .contains("no tool named \"t\" (not offered: invalid x-mcp-header"),
        "{err}"
    );
    let ok = pick(
        &["u"],
        Era::Stateless(v),
        vec![tool("t", bad), tool("u", r#"{"type":"object"}"#)],
    )
    .expect("u kept");
    assert_eq!(ok.warnings.len(), 1, "{:?}", ok.warnings);
    assert!(ok.warnings[0].starts_with("tool \"t\" is not offered"));
    let ok = pick(&["t"], Era::Handshake, vec![tool("t", bad)]).expect("kept");
    assert!(ok.warnings.is_empty());
}

fn secrets() -> brain_mcp_transport::Secrets {
    brain_mcp_transport::Secrets::none()
}

#[test]
fn bindings_that_would_not_load_fail_discovery_naming_each_tool() {
    let err = pick(
        &["ok", "no_type", "remote"],
        Era::Handshake,
        vec![
            tool("ok", r#"{"type":"object"}"#),
            tool("no_type", r#"{"properties":{}}"#),
            tool(
                "remote",
                r#"{"type":"object","$ref":"https://example.com/s.json"}"#,
            ),
        ],
    )
    .expect_err("two do not load");
    assert!(
        err.kind() == DiscoverErrorKind::Unloadable && err.names() == ["no_type", "remote"],
        "{err:?}"
    );
    let err = err.to_string();
    assert!(
        err.contains("tool \"no_type\": input_schema: must have \"type\": \"object\""),
        "{err}"
    );
    assert!(
        err.contains("tool \"remote\": input_schema: is not a valid JSON Schema"),
        "{err}"
    );
    assert!(!err.contains("tool \"ok\""), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
    let found = pick(
        &["ok"],
        Era::Handshake,
        vec![tool("ok", r#"{"type":"object"}"#)],
    )
    .expect("loads");
    let config = brain_tools_core::HostConfig::load(&format!("{{\"tools\": {}}}", found.json));
    assert!(config.is_ok(), "{config:?}");
}

/// A hint search deadline that never stops a test.
fn later() -> std::time::Instant {
    std::time::Instant::now() + Duration::from_secs(3600)
}
