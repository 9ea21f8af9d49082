//! `mcp-tools` failures (issue 6, item 3): each exits non-zero with a message naming the
//! problem, and the checks that need no server send nothing.

use std::time::{Duration, Instant};

use brain_mcp_bind::cmd::{EXIT_FAILED, EXIT_USAGE};
use brain_mcp_bind::discover::{DEFAULT_DEADLINE, MAX_PAGES};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::discover_support::{Behaviour, Run, TENANT, TinyServer, dead_url, mcp_tools};

fn run(url: &str, tools: &str, extra: &[&str]) -> Run {
    let mut args = vec!["-url", url, "-tenant", TENANT, "-tools", tools];
    args.extend_from_slice(extra);
    mcp_tools(&args)
}

/// Asserts a failed run: exit 1, nothing on stdout, and `needle` in the message.
fn assert_fails(run: &Run, needle: &str) {
    assert_eq!(run.code, EXIT_FAILED, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr.starts_with("mcp-tools: ") && run.stderr.contains(needle),
        "expected {needle:?} in stderr: {run:?}"
    );
}

#[test]
fn bad_tool_lists_fail_before_connecting() {
    let server = TestServer::start(ServerConfig::new(Era::Both));
    let url = server.url();
    for empty in ["", " "] {
        assert_fails(&run(&url, empty, &[]), "the tool list is empty");
    }
    assert_fails(
        &run(&url, "echo,,fail", &[]),
        "tool name 2 of the list is empty",
    );
    let many: Vec<String> = (0..129).map(|i| format!("t{i}")).collect();
    assert_fails(
        &run(&url, &many.join(","), &[]),
        "129 tools named: at most 128 are allowed",
    );
    assert_fails(
        &run(&url, "echo,fail, echo", &[]),
        "tool \"echo\" is named more than once",
    );
    assert_eq!(server.stats().connections, 0, "nothing may be sent");
}

#[test]
fn an_unset_token_variable_fails_and_sends_nothing() {
    let server = TestServer::start(ServerConfig::new(Era::Both));
    let var = "BRAIN_DISCOVERY_TEST_TOKEN_NEVER_SET";
    assert!(std::env::var_os(var).is_none());
    let r = run(&server.url(), "echo", &["-token-env", var]);
    assert_fails(&r, var);
    assert_eq!(server.stats().connections, 0, "nothing may be sent");
}

#[test]
fn the_token_is_sent_and_bound_but_never_printed() {
    // Tests may not set environment variables (that needs `unsafe`); cargo sets this one
    // for every test process, so it stands in for an API key.
    let var = "CARGO_PKG_NAME";
    let token = std::env::var(var).expect("cargo sets CARGO_PKG_NAME for tests");
    let server = TestServer::start(ServerConfig {
        require_token: Some(token.clone()),
        ..ServerConfig::new(Era::Both)
    });
    let r = run(&server.url(), "echo", &["-token-env", var]);
    assert_eq!(r.code, 0, "{r:?}");
    let printed = crate::discover_support::printed(&r.stdout);
    assert_eq!(printed[0].value("token_env"), Some(json!(var)));
    assert_eq!(
        printed[0].keys(),
        crate::discover_support::expected_keys(true, false)
    );
    assert!(!r.stdout.contains(&format!("\"{token}\"")), "{r:?}");
    let stats = server.stats();
    assert!(!stats.received.is_empty());
    let expected = format!("Bearer {token}");
    assert!(
        stats
            .received
            .iter()
            .all(|m| m.authorization.as_deref() == Some(expected.as_str())),
        "every request carries the token"
    );
    // The same server refuses a discovery without the token, and says so.
    let r = run(&server.url(), "echo", &[]);
    assert_fails(&r, "refused the credentials (401");
}

#[test]
fn invalid_urls_are_usage_errors_before_connecting() {
    for (url, why) in [
        ("mailto:ops@example.test", "must be an http or https URL"),
        ("not a url", "must not contain whitespace"),
        ("/mcp", "must be an http or https URL"),
        ("ftp://127.0.0.1/mcp", "must be an http or https URL"),
        // Credentials in the URL are refused, never dropped or printed.
        (
            "http://user:pw-s3cret@127.0.0.1:9/mcp",
            "must not contain credentials; use token_env",
        ),
        // What the HTTP layer could not send is refused now, not at call time.
        (
            "http://127.0.0.1:9/mcp?q=\"x\"&key=k3y-s3cret",
            "must be percent-encoded",
        ),
        (
            "http://127.0.0.1:9/mcp?<k3y-s3cret>",
            "must be percent-encoded",
        ),
        ("http://bücher.example/mcp", "xn-- form"),
    ] {
        let r = run(url, "echo", &[]);
        assert_eq!(r.code, EXIT_USAGE, "{url}: {r:?}");
        assert!(r.stdout.is_empty(), "{r:?}");
        assert!(
            r.stderr.starts_with("mcp-tools: -url: the URL ") && r.stderr.contains(why),
            "{url}: {r:?}"
        );
        assert!(
            !r.stderr.contains("s3cret"),
            "the URL is never echoed: {r:?}"
        );
    }
}

#[test]
fn an_unreachable_server_fails() {
    let started = Instant::now();
    let r = run(&dead_url(), "echo", &[]);
    assert_fails(&r, "could not reach the server");
    assert!(started.elapsed() < Duration::from_secs(15), "{r:?}");
}

#[test]
fn missing_tools_are_all_named_with_close_matches() {
    let server = TestServer::start(ServerConfig::new(Era::Both));
    let r = run(&server.url(), "echo,ecko,no-such-tool,strucured", &[]);
    assert_fails(
        &r,
        "the server has no tool named \"ecko\" (did you mean \"echo\"?), \"no-such-tool\", \
         \"strucured\" (did you mean \"structured\"?)",
    );
}

#[test]
fn server_errors_fail() {
    // Handshake era: initialize answered with HTTP 500.
    let server = TestServer::start(ServerConfig {
        initialize_fails: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let r = run(&server.url(), "echo", &[]);
    // A JSON-RPC error reads the same with any status; the status is named too.
    assert_fails(
        &r,
        "initialize: the server answered with error -32603: injected initialize failure (HTTP 500)",
    );
    // 2026 era: tools/list answered with a JSON-RPC error.
    let tiny = TinyServer::start(Behaviour::ListFails(-32603, "the tool catalogue is down"));
    let r = run(&tiny.url(), "echo", &[]);
    assert_fails(
        &r,
        "tools/list (page 1): the server answered with error -32603: the tool catalogue is down",
    );
}

#[test]
fn a_server_that_never_answers_hits_the_deadline() {
    assert_eq!(
        DEFAULT_DEADLINE,
        Duration::from_secs(30),
        "the documented bound"
    );
    let help = mcp_tools(&["-h"]);
    assert!(help.stdout.contains("-timeout"), "{:?}", help.stdout);
    // Nothing answered at all, not even the era probe.
    let silent = TinyServer::start(Behaviour::Silent);
    let started = Instant::now();
    let r = run(&silent.url(), "echo", &["-timeout", "1"]);
    let took = started.elapsed();
    assert_fails(&r, "discovery took longer than 1 s");
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert_eq!(silent.count("server/discover"), 1);
    assert_eq!(
        silent.connections(),
        1,
        "the probe is not retried on a silent server"
    );
    // The era is learned, then the handshake stalls: the bound covers it too.
    let stalled = TestServer::start(ServerConfig {
        stall_initialize: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let started = Instant::now();
    let r = run(&stalled.url(), "echo", &["-timeout", "1.5"]);
    assert_fails(&r, "discovery took longer than 1.5 s");
    assert!(started.elapsed() < Duration::from_secs(9));
    assert_eq!(stalled.stats().count("initialize"), 1);
}

#[test]
fn bad_timeouts_are_usage_errors() {
    for bad in ["0", "-1", "soon", "100000"] {
        let r = run("http://127.0.0.1:9/mcp", "echo", &["-timeout", bad]);
        assert_eq!(r.code, EXIT_USAGE, "{bad}: {r:?}");
        assert!(r.stderr.contains("-timeout"), "{r:?}");
    }
}

#[test]
fn a_server_that_paginates_for_ever_is_cut_off() {
    let endless = TinyServer::start(Behaviour::EndlessPages);
    let r = run(&endless.url(), "t1", &[]);
    assert_fails(
        &r,
        &format!("the server kept paginating tools/list past {MAX_PAGES} pages"),
    );
    assert_eq!(endless.count("tools/list"), MAX_PAGES);
}

#[test]
fn tools_with_invalid_param_headers_are_not_offered_in_the_2026_era() {
    let tools = vec![
        json!({"name": "good", "description": "fine", "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
        }}),
        json!({"name": "bad", "description": "header on a number", "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "number", "x-mcp-header": "N"}}
        }}),
    ];
    let tiny = TinyServer::start(Behaviour::Tools(tools));
    let r = run(&tiny.url(), "good", &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("mcp-tools: tool \"bad\" is not offered: its input schema has an invalid x-mcp-header annotation"),
        "{r:?}"
    );
    let printed = crate::discover_support::printed(&r.stdout);
    assert_eq!(printed.len(), 1);
    assert_eq!(printed[0].value("name"), Some(json!("good")));
    let r = run(&tiny.url(), "good,bad", &[]);
    assert_fails(
        &r,
        "the server has no tool named \"bad\" (not offered: invalid x-mcp-header annotation",
    );
}
