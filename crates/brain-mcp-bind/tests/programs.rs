//! The two programs as processes: what a service manager's signals and a shell's bytes do.
//!
//! Each test starts the built `mcp-call` or `mcp-tools` against the test server, so
//! signals reach a real process and nothing else in the test run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test
#![cfg(unix)]

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

const CALL: &str = env!("CARGO_BIN_EXE_mcp-call");
const TOOLS: &str = env!("CARGO_BIN_EXE_mcp-tools");

/// A host config with one binding, `hang`, for the tool that never answers.
fn config(server: &TestServer, dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("host.json");
    let config = json!({"tools": [{
        "name": "hang",
        "description": "never answers",
        "input_schema": {"type": "object"},
        "url": server.url(),
        "mcp_tool": "hang",
        "tenants": ["acme"],
        "timeout_seconds": 60,
    }]});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("brain-programs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spawn(program: &str, args: &[&str]) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the child to exit (at most `within`): exit code, stdout, stderr.
fn finish(mut child: Child, within: Duration) -> (i32, String, String) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            let mut err = String::new();
            if let Some(mut stdout) = child.stdout.take() {
                stdout.read_to_string(&mut out).unwrap();
            }
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code().unwrap_or(-1), out, err);
        }
        if started.elapsed() > within {
            child.kill().ok();
            panic!("the program did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for(server: &TestServer, what: &str, check: impl Fn(&brain_tests::server::Stats) -> bool) {
    let (stats, held) = server.wait_until(Duration::from_secs(10), check);
    assert!(held, "{what}: {:?}", stats.methods());
}

#[test]
fn sigterm_and_sighup_cancel_the_call_report_it_and_close_the_session() {
    for (era, name) in [
        (Era::Handshake, "TERM"),
        (Era::Stateless, "TERM"),
        (Era::Handshake, "HUP"),
        (Era::Stateless, "INT"),
    ] {
        let server = TestServer::start(ServerConfig::new(era));
        let dir = temp_dir(&format!("{era:?}-{name}"));
        let host = config(&server, &dir);
        let child = spawn(
            CALL,
            &[
                "-config",
                host.to_str().unwrap(),
                "-tool",
                "hang",
                "-tenant",
                "acme",
            ],
        );
        wait_for(&server, "the call reached the server", |s| {
            s.count("tools/call") == 1
        });
        signal(&child, name);
        let (code, out, err) = finish(child, Duration::from_secs(10));
        let what = format!("{era:?} SIG{name}: {err}");
        assert_eq!(code, 1, "{what}");
        let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "tool.result", "{what}");
        assert_eq!(last["error"]["kind"], "cancelled", "{what}: {last}");
        match era {
            Era::Handshake => {
                wait_for(&server, "cancel and DELETE", |s| {
                    !s.cancelled_request_ids().is_empty() && !s.sessions_deleted.is_empty()
                });
                let stats = server.stats();
                assert_eq!(stats.sessions_opened, stats.sessions_deleted, "{what}");
            }
            _ => wait_for(&server, "the stream closed", |s| {
                !s.abandoned_streams.is_empty()
            }),
        }
        std::fs::remove_dir_all(dir).ok();
    }
}

#[test]
fn a_second_signal_exits_at_once_without_waiting_for_cleanup() {
    // The server never answers the DELETE: after the first SIGTERM, cleanup would wait
    // its full bound (5 s); the second SIGTERM ends the process at once.
    let server = TestServer::start(ServerConfig {
        stall_delete: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let dir = temp_dir("second");
    let host = config(&server, &dir);
    let mut child = spawn(
        CALL,
        &[
            "-config",
            host.to_str().unwrap(),
            "-tool",
            "hang",
            "-tenant",
            "acme",
        ],
    );
    // The result is read as it is written: the DELETE may reach the server before the
    // program has printed it, and the second signal must come after.
    let stdout = child.stdout.take().unwrap();
    let (printed, result) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let mut lines = std::io::BufReader::new(stdout);
        let mut line = String::new();
        while std::io::BufRead::read_line(&mut lines, &mut line).unwrap_or(0) > 0 {
            if line.contains("\"cancelled\"") {
                let _ = printed.send(());
            }
            out.push_str(&line);
            line.clear();
        }
        out
    });
    wait_for(&server, "the call", |s| s.count("tools/call") == 1);
    signal(&child, "TERM");
    wait_for(&server, "the DELETE", |s| !s.deletes().is_empty());
    result
        .recv_timeout(Duration::from_secs(10))
        .expect("the cancelled result is printed after the first signal");
    let second = Instant::now();
    signal(&child, "TERM");
    let (code, _, err) = finish(child, Duration::from_secs(10));
    let out = reader.join().unwrap();
    assert!(
        second.elapsed() < Duration::from_secs(2),
        "{:?}",
        second.elapsed()
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("\"cancelled\""),
        "the result came first: {out}"
    );
    assert!(err.contains("SIGTERM again"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn mcp_tools_closes_its_session_when_stopped() {
    // The first page of tools/list never comes: a stop signal ends the discovery and its
    // session is still DELETEd.
    let server = TestServer::start(ServerConfig {
        stall_method: Some("tools/list"),
        ..ServerConfig::new(Era::Handshake)
    });
    let url = server.url();
    let child = spawn(
        TOOLS,
        &[
            "-url", &url, "-tenant", "acme", "-tools", "hang", "-timeout", "60",
        ],
    );
    wait_for(&server, "the listing asked for", |s| {
        s.count("tools/list") == 1
    });
    signal(&child, "TERM");
    let (code, out, err) = finish(child, Duration::from_secs(10));
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("stopped by SIGTERM"), "{err}");
    wait_for(&server, "the DELETE", |s| !s.sessions_deleted.is_empty());
}

#[test]
fn arguments_that_are_not_utf8_exit_2_with_one_line() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
    for program in [CALL, TOOLS] {
        let out = Command::new(program)
            .args([std::ffi::OsStr::new("-tool"), bad])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{program}: {err}");
        assert_eq!(err.lines().count(), 1, "{program}: {err}");
        assert!(err.contains("argument 2 is not valid UTF-8"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn mcp_call_reads_its_proxy_and_the_bindings_headers() {
    use brain_tests::proxy::{ProxyOptions, TestProxy};
    // `mcp.test` resolves nowhere but in the proxy: the call succeeds only through it.
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let proxy = TestProxy::start(ProxyOptions::default().host("mcp.test", server.addr()));
    let dir = temp_dir("proxy");
    let path = dir.join("host.json");
    let url = format!("http://mcp.test:{}/mcp", server.addr().port());
    let config = json!({"tools": [{
        "name": "echo",
        "description": "echo",
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": "echo",
        "tenants": ["acme"],
        "headers": {"X-Team": "search"},
    }]});
    std::fs::write(&path, config.to_string()).unwrap();
    let mut command = Command::new(CALL);
    for name in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "REQUEST_METHOD",
    ] {
        command.env_remove(name);
    }
    let child = command
        .env("http_proxy", proxy.url())
        .env("NO_PROXY", "example.invalid")
        .args([
            "-config",
            path.to_str().unwrap(),
            "-tool",
            "echo",
            "-tenant",
            "acme",
            "-args",
            r#"{"text": "via the proxy"}"#,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, out, err) = finish(child, Duration::from_secs(20));
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("via the proxy"), "{out}");
    let seen = proxy.seen();
    assert!(
        seen.iter().any(|s| s.method == "DELETE") && seen.iter().any(|s| s.method == "POST"),
        "{seen:?}"
    );
    assert!(seen.iter().all(|s| s.target.starts_with(&url)), "{seen:?}");
    let stats = server.stats();
    assert_eq!(stats.received.len(), seen.len());
    assert!(
        stats
            .received
            .iter()
            .all(|r| r.header("x-team") == Some("search")),
        "{stats:?}"
    );
    std::fs::remove_dir_all(dir).ok();
}
