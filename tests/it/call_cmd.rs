//! `mcp-call` as a function: exit codes, JSON lines on stdout, and nothing sent when the
//! command line or the config is wrong.

use std::path::PathBuf;

use brain_mcp_bind::cmd::call::main as mcp_call;
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{TENANT, spec};

/// A host config file for this test, removed on drop.
struct ConfigFile(PathBuf);

impl ConfigFile {
    fn new(name: &str, text: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("brain-e2e-call-{}-{name}.json", std::process::id()));
        std::fs::write(&path, text).expect("write the host config");
        Self(path)
    }

    fn with_tools(name: &str, tools: Value) -> Self {
        Self::new(name, &json!({"tools": tools}).to_string())
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Each stdout line, parsed as JSON.
    fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
            .collect()
    }
}

fn run(args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mcp_call(&args, &mut out, &mut err);
    Run {
        code,
        stdout: String::from_utf8(out).expect("UTF-8 stdout"),
        stderr: String::from_utf8(err).expect("UTF-8 stderr"),
    }
}

fn server_and_config(name: &str) -> (TestServer, ConfigFile) {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let url = server.url();
    let tools = json!([
        spec("echo", &url, "echo"),
        spec("progress", &url, "progress"),
        spec("fail", &url, "fail")
    ]);
    (server, ConfigFile::with_tools(name, tools))
}

#[test]
fn a_successful_call_prints_progress_then_the_result_and_exits_0() {
    let (server, config) = server_and_config("ok");
    let path = config.path();
    let base = ["-config", &path, "-tenant", TENANT, "-session", "s-9"];
    let run1 = run(&[
        &base[..],
        &[
            "-tool",
            "echo",
            "-call-id",
            "cmd-1",
            "-args",
            r#"{"text":"hi"}"#,
        ],
    ]
    .concat());
    assert_eq!(run1.code, 0, "{}", run1.stderr);
    assert_eq!(
        run1.events(),
        [
            json!({"type": "tool.result", "call_id": "cmd-1", "is_error": false,
            "content": [{"type": "text", "text": "hi"}]})
        ]
    );

    // Double-dash flags work too.
    let args = [
        "--config",
        &path,
        "--tenant",
        TENANT,
        "--tool",
        "progress",
        "--call-id",
        "cmd-2",
        "--args",
        r#"{"steps":2,"delay_ms":0}"#,
    ];
    let run2 = run(&args);
    assert_eq!(run2.code, 0, "{}", run2.stderr);
    let events = run2.events();
    assert_eq!(events.len(), 3, "{}", run2.stdout);
    for (i, event) in events[..2].iter().enumerate() {
        assert_eq!(
            event,
            &json!({"type": "tool.progress", "call_id": "cmd-2", "progress": i + 1, "total": 2,
                "message": format!("step {}", i + 1)})
        );
    }
    assert_eq!(events[2]["type"], "tool.result");
    assert_eq!(events[2]["is_error"], false);

    // The session and call ids given reached the server as the scope.
    let stats = server.stats();
    let scopes: Vec<&Value> = stats
        .with_method("tools/call")
        .map(|r| &r.body["params"]["_meta"]["brain.dev/scope"])
        .collect();
    assert_eq!(
        scopes[0],
        &json!({"tenant_id": TENANT, "session_id": "s-9", "call_id": "cmd-1"})
    );
    // Without -session a session id is generated.
    assert!(
        scopes[1]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    // mcp-call waits for the session cleanup before it returns.
    assert_eq!(stats.sessions_opened, stats.sessions_deleted);
}

#[test]
fn an_error_result_exits_1() {
    let (_server, config) = server_and_config("fail");
    let path = config.path();
    let r = run(&[
        "-config", &path, "-tool", "fail", "-tenant", TENANT, "-call-id", "cmd-3",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.events(),
        [
            json!({"type": "tool.result", "call_id": "cmd-3", "is_error": true,
            "content": [{"type": "text", "text": "the tool failed, as asked"}],
            "unknown_outcome": false})
        ]
    );

    // Brain's own failure also exits 1, with the kind on stderr.
    let r = run(&[
        "-config", &path, "-tool", "echo", "-tenant", "intruder", "-call-id", "cmd-4",
    ]);
    assert_eq!(r.code, 1);
    let events = r.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["error"]["kind"], "tenant_not_allowed");
    assert_eq!(events[0]["unknown_outcome"], false);
    assert!(r.stderr.contains("tenant_not_allowed"), "{}", r.stderr);
}

#[test]
fn usage_and_config_errors_exit_2_and_send_nothing() {
    let (server, config) = server_and_config("usage");
    let path = config.path();
    let not_json_file = ConfigFile::new("notjson", "{\"tools\": [");
    let not_json = not_json_file.path();
    let invalid_file =
        ConfigFile::with_tools("invalid", json!([{"name": "echo", "url": server.url()}]));
    let invalid = invalid_file.path();
    let missing = std::env::temp_dir().join("brain-e2e-call-no-such-config.json");
    let missing = missing.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "-config", &path, "-tool", "echo", "-tenant", TENANT, "-bogus", "1",
            ],
            "bogus",
        ),
        (vec!["-config", &path, "-tool", "echo"], "tenant"),
        (vec!["-tool", "echo", "-tenant", TENANT], "config"),
        (
            vec!["-config", &path, "-tool", "ecko", "-tenant", TENANT],
            "did you mean echo",
        ),
        (
            vec![
                "-config", &path, "-tool", "echo", "-tenant", TENANT, "-args", "{nope",
            ],
            "-args",
        ),
        (
            vec!["-config", &not_json, "-tool", "echo", "-tenant", TENANT],
            "not valid JSON",
        ),
        (
            vec!["-config", &invalid, "-tool", "echo", "-tenant", TENANT],
            "tools[0]",
        ),
        (
            vec!["-config", &missing, "-tool", "echo", "-tenant", TENANT],
            "cannot read",
        ),
    ];
    for (args, says) in cases {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
    // Arguments that break the binding's schema are a refused call: a result, exit 1.
    let r = run(&[
        "-config", &path, "-tool", "echo", "-tenant", TENANT, "-args", "[1]",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let events = r.events();
    assert_eq!(events.len(), 1, "{}", r.stdout);
    assert_eq!(events[0]["error"]["kind"], "invalid_arguments");
    assert_eq!(events[0]["unknown_outcome"], false);
    // -h prints the usage and exits 0.
    let r = run(&["-h"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("-config HOST.json"), "{}", r.stdout);
    let stats = server.stats();
    assert_eq!(stats.connections, 0, "{stats:?}");
}
