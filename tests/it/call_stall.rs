//! The cleanup of an abandoned handshake-era call runs off the caller's path and is bounded:
//! against a server that never answers `notifications/cancelled` or the DELETE, the caller
//! still gets its result at the deadline, and the DELETE is still sent after the cancel
//! gives up.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brain_mcp_bind::{CLEANUP_STEP_DEADLINE, Era};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, assert_failure, binding, call_with, spec};

/// What the stub saw: a label per request (JSON-RPC method, or `DELETE`).
type Seen = Arc<Mutex<Vec<String>>>;

/// Reads one HTTP request: its method and its body parsed as JSON (`Null` when none).
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, Value)> {
    let mut first = String::new();
    if reader.read_line(&mut first).ok()? == 0 {
        return None;
    }
    let method = first.split(' ').next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

fn respond(stream: &mut TcpStream, head: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {head}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(text.as_bytes());
}

/// Serves one connection: answers the handshake, and never answers the call, the cancel
/// or the DELETE (it holds them open instead).
fn serve(stream: TcpStream, seen: &Seen) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    while let Some((http_method, body)) = read_request(&mut reader) {
        let method = body["method"].as_str().map(str::to_owned);
        let label = method.clone().unwrap_or(http_method);
        seen.lock().expect("seen lock").push(label.clone());
        match label.as_str() {
            "initialize" => {
                let result = json!({"jsonrpc": "2.0", "id": body["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stall-stub", "version": "1"}}});
                respond(
                    &mut writer,
                    "200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: stall-1",
                    &result.to_string(),
                );
            }
            "notifications/initialized" => respond(&mut writer, "202 Accepted", ""),
            _ => {
                // tools/call, notifications/cancelled, DELETE: hold the request open.
                std::thread::sleep(Duration::from_secs(60));
                return;
            }
        }
    }
}

fn stub() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stub");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let seen = Seen::default();
    let accepted = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = accepted.clone();
            std::thread::spawn(move || serve(stream, &seen));
        }
    });
    (url, seen)
}

#[tokio::test]
async fn cleanup_is_off_the_callers_path_and_bounded() {
    let (url, seen) = stub();
    let h = Harness::new();
    h.client.set_era(&url, Era::Handshake);
    let mut echo = spec("echo", &url, "echo");
    echo["timeout_seconds"] = json!(1);
    let started = Instant::now();
    let out = call_with(&h, &binding(echo), Call::new("stall-1", json!({}))).await;
    let took = started.elapsed();
    assert_failure(&out.result, "timeout", true);
    // Waiting for the cancel here would add CLEANUP_STEP_DEADLINE to the deadline.
    assert!(
        took < Duration::from_secs(1) + CLEANUP_STEP_DEADLINE,
        "the result took {took:?}"
    );
    // Each cleanup step gives up after its deadline, so the flush ends.
    let flushed = Instant::now();
    assert!(
        h.client.flush(Duration::from_secs(30)).await,
        "cleanup ended"
    );
    assert!(
        flushed.elapsed() < CLEANUP_STEP_DEADLINE * 2 + Duration::from_secs(5),
        "cleanup took {:?}",
        flushed.elapsed()
    );
    let seen = seen.lock().expect("seen lock").clone();
    assert_eq!(
        seen,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "notifications/cancelled",
            "DELETE"
        ]
    );
}
