//! The `brain-demo-server` binary: its command line, its first line, and its lifetime.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::server_http::{ACCEPT, Conn, JSON, modern_call, rpc};

const BIN: &str = env!("CARGO_BIN_EXE_brain-demo-server");

#[test]
fn prints_its_url_serves_and_exits_when_stdin_closes() {
    let mut child = Command::new(BIN)
        .args(["--era", "stateless"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the demo server");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the first line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the listening line");
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .and_then(|s| s.strip_suffix("/mcp"))
        .and_then(|s| s.parse().ok())
        .expect("http://127.0.0.1:P/mcp");
    assert!(addr.ip().is_loopback());

    let mut conn = Conn::open(addr);
    let list = modern_call(&mut conn, 1, "tools/list", None, json!({})).json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        brain_tests::server::DEMO_TOOLS,
        "no fault tools in the demo"
    );
    let init = rpc(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(
        conn.call("POST", &[ACCEPT, JSON], Some(&init)).status,
        400,
        "stateless only"
    );

    drop(child.stdin.take());
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("the demo server did not exit when stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_bad_command_line_exits_2() {
    let out = Command::new(BIN)
        .args(["--era", "middle"])
        .stdin(Stdio::null())
        .output()
        .expect("run the demo server");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown era"));
}
