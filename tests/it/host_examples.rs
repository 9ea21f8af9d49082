//! The two examples of `brain-mcp-bind`, run as programs: `managed_stdio` against the
//! Python SDK server and a failing server, `embed` over a host config file.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

use brain_tests::peers::{Peer, project_root};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::stdio_support::wait_gone;

/// Builds the examples once (a no-op when `cargo xtask ci` built them) and returns
/// their directory.
fn examples() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args([
                "build",
                "-q",
                "--locked",
                "-p",
                "brain-mcp-bind",
                "--examples",
            ])
            .current_dir(project_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the examples failed");
        // The test binary is target/<profile>/deps/it-<hash>.
        let exe = std::env::current_exe().expect("the test binary");
        exe.parent()
            .and_then(|deps| deps.parent())
            .map(|profile| profile.join("examples"))
            .expect("a target directory")
    })
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test]
async fn managed_stdio_calls_a_python_tool_and_leaves_no_child() {
    let py = Peer::python_stdio_command().expect("the Python SDK peer");
    let marker = format!("brain-example-{}", std::process::id());
    let run = |tool: &str, args: &str| {
        Command::new(examples().join("managed_stdio"))
            .args([
                "-tenant", "t", "-tool", tool, "-args", args, "-timeout", "60", "--",
            ])
            .arg(&py.program)
            .args(&py.args)
            .arg(&marker)
            .output()
            .expect("the example runs")
    };
    let out = run("progress", r#"{"steps": 2}"#);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = lines(&out);
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        events[0],
        json!({"type": "tool.progress", "call_id": "call-1", "progress": 1, "total": 2,
            "message": "step 1 of 2"})
    );
    assert_eq!(events[2]["type"], "tool.result");
    assert_eq!(events[2]["content"][0]["text"], "done after 2 steps");
    assert_eq!(
        wait_gone(&marker, std::time::Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );

    // The tool's own error: exit 1, like mcp-call.
    let out = run("fail", r#"{"reason": "no"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(lines(&out)[0]["is_error"], true);
    // No such tool, or a bad command line: exit 2, nothing called.
    let out = run("nope", "{}");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool named \"nope\""));
    let out = Command::new(examples().join("managed_stdio"))
        .args(["-tenant", "t"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        wait_gone(&marker, std::time::Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}

#[tokio::test]
async fn managed_stdio_reports_a_child_that_dies_as_connection_lost() {
    let fault = Peer::fault_stdio_command("exit", "brain-example-exit");
    let out = Command::new(examples().join("managed_stdio"))
        .args(["-tenant", "t", "-tool", "work", "--"])
        .arg(&fault.program)
        .args(&fault.args)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let events = lines(&out);
    assert_eq!(events[0]["error"]["kind"], "connection_lost", "{events:?}");
    assert_eq!(events[0]["unknown_outcome"], true);
}

#[tokio::test]
async fn embed_shows_a_tenant_its_tools_and_runs_a_call() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let dir = std::env::temp_dir().join(format!("brain-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join("host.json");
    let config = json!({"tools": [
        {"name": "echo", "description": "Echoes.", "input_schema": {"type": "object"},
         "url": server.url(), "mcp_tool": "echo", "tenants": ["acme"]},
        {"name": "other", "description": "Not acme's.", "input_schema": {"type": "object"},
         "url": server.url(), "mcp_tool": "echo", "tenants": ["someone"]}
    ]});
    std::fs::write(&path, config.to_string()).expect("the config is written");
    let out = Command::new(examples().join("embed"))
        .arg(&path)
        .args(["acme", "echo", r#"{"text": "hi"}"#])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = lines(&out);
    assert_eq!(
        events[0],
        json!({"tools": [{"name": "echo", "description": "Echoes.",
            "input_schema": {"type": "object"}}]})
    );
    assert_eq!(events[1]["type"], "tool.result");
    assert_eq!(events[1]["content"][0]["text"], "hi");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The peak resident memory of process `pid` in KiB (`VmHWM`), while it runs.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::test]
async fn a_100_mb_line_from_a_child_costs_the_host_a_bounded_amount_of_memory() {
    let fault = Peer::fault_stdio_command("huge", "brain-example-huge");
    let mut child = Command::new(examples().join("managed_stdio"))
        .args(["-tenant", "t", "-tool", "work", "--"])
        .arg(&fault.program)
        .args(&fault.args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("runs");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    let out = child.wait_with_output().expect("output");
    assert_eq!(status.code(), Some(1));
    let events = lines(&out);
    assert_eq!(events[0]["error"]["kind"], "output_too_large", "{events:?}");
    // The line limit is 8 MiB (the largest of the tool's read budget and a tool list's);
    // the whole program stays far below the 100 MB the child wrote.
    assert!(peak > 0, "the program's memory was read");
    assert!(
        peak < 48 * 1024,
        "peak resident memory {peak} KiB for a 100 MB line"
    );
}
