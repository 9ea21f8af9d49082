//! `-v` and `RUST_LOG` on the programs, run as processes: one line per exchange and the
//! era on stderr, stdout unchanged, and the token nowhere, whatever the level.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

use std::process::Command;

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

const CALL: &str = env!("CARGO_BIN_EXE_mcp-call");
const TOOLS: &str = env!("CARGO_BIN_EXE_mcp-tools");
const TOKEN: &str = "tok-verbose-7c1d2e-secret";

/// A host config with `echo` on `server`, its token in `VERBOSE_TOKEN`.
fn host_config(server: &TestServer, name: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("brain-verbose-{}-{name}.json", std::process::id()));
    let config = json!({"tools": [{
        "name": "echo",
        "description": "echo",
        "input_schema": {"type": "object"},
        "url": server.url(),
        "mcp_tool": "echo",
        "token_env": "VERBOSE_TOKEN",
        "tenants": ["acme"],
    }]});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(program);
    command.args(args).env_remove("RUST_LOG");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verbose_call_prints_each_exchange_and_keeps_stdout_json() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let host = host_config(&server, "call");
    let args = [
        "-config",
        host.to_str().unwrap(),
        "-tool",
        "echo",
        "-tenant",
        "acme",
    ];
    let (code, out, err) = run(
        CALL,
        &[
            &args[..],
            &["-args", &format!(r#"{{"text":"{TOKEN}"}}"#), "-v"],
        ]
        .concat(),
        &[("VERBOSE_TOKEN", TOKEN)],
    );
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        serde_json::from_str::<Value>(line).expect("stdout holds only JSON lines");
    }
    let lines: Vec<&str> = err.lines().collect();
    let has = |prefix: &str| lines.iter().any(|l| l.starts_with(prefix));
    assert!(has("mcp-call: server/discover POST -> "), "{err}");
    assert!(
        has("mcp-call: era handshake for http://127.0.0.1:"),
        "{err}"
    );
    assert!(
        has("mcp-call: initialize POST -> 200 application/json, "),
        "{err}"
    );
    assert!(has("mcp-call: session "), "{err}");
    assert!(has("mcp-call: tools/call POST -> 200 "), "{err}");
    assert!(has("mcp-call: end session DELETE -> 200"), "{err}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(", session ") && l.contains(", connection 1 reused")),
        "{err}"
    );
    assert!(!err.contains(TOKEN) && !out.contains(TOKEN), "{err}\n{out}");
    // Without -v, stderr stays empty.
    let quiet_args = [&args[..], &["-args", r#"{"text":"hi"}"#]].concat();
    let (_, _, quiet) = run(CALL, &quiet_args, &[("VERBOSE_TOKEN", TOKEN)]);
    assert!(quiet.is_empty(), "{quiet}");
    std::fs::remove_file(host).ok();
}

#[test]
fn rust_log_trace_shows_spans_and_bodies_but_never_the_token() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        let host = host_config(&server, &format!("{era:?}"));
        let (code, _, err) = run(
            CALL,
            &[
                "-config",
                host.to_str().unwrap(),
                "-tool",
                "echo",
                "-tenant",
                "acme",
                "-args",
                &format!(r#"{{"text":"{TOKEN}"}}"#),
            ],
            &[("VERBOSE_TOKEN", TOKEN), ("RUST_LOG", "trace")],
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("tool_call{"), "{era:?}: {err}");
        assert!(err.contains("mcp_exchange{"), "{era:?}");
        assert!(err.contains("body="), "{era:?}: bodies at trace");
        assert!(err.contains("tool call ended"), "{era:?}");
        assert!(!err.contains(TOKEN), "{era:?}: the token leaked at trace");
        std::fs::remove_file(host).ok();
    }
}

#[test]
fn verbose_discovery_and_a_malformed_traceparent() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let (code, out, err) = run(TOOLS, &["-list", &server.url(), "-v"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("echo\t")), "{out}");
    assert!(
        err.contains("mcp-tools: era 2026-07-28 for http://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("mcp-tools: tools/list POST -> 200 "), "{err}");
    // A malformed traceparent is noted and not sent.
    let host = host_config(&server, "tp");
    let (code, _, err) = run(
        CALL,
        &[
            "-config",
            host.to_str().unwrap(),
            "-tool",
            "echo",
            "-tenant",
            "acme",
            "-traceparent",
            "00-nope",
            "-args",
            r#"{"text":"hi"}"#,
        ],
        &[("VERBOSE_TOKEN", TOKEN)],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("mcp-call: -traceparent is not passed on: "),
        "{err}"
    );
    let stats = server.stats();
    let sent = stats.with_method("tools/call").next().expect("the call");
    assert!(
        sent.body["params"]["_meta"].get("traceparent").is_none(),
        "{:?}",
        sent.body
    );
    std::fs::remove_file(host).ok();
}
