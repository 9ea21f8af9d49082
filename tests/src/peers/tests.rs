//! The peers themselves: each starts and answers a raw `initialize` over plain TCP.
//! (No MCP client of ours here on purpose: these tests check the harness, not the client.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Peer, PeerKind};

/// One HTTP/1.1 POST with `Connection: close`; returns (status, content type, body).
fn post(peer: &Peer, headers: &[(&str, &str)], body: &Value) -> (u16, String, String) {
    let body = body.to_string();
    // A failure says what the peer itself logged, so a run that fails once can be read.
    let log = || {
        let text = std::fs::read_to_string(peer.log_path()).unwrap_or_default();
        format!("{}:\n{text}", peer.log_path().display())
    };
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        peer.port(),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    // A reset connection is tried once more on a new one (the first is reported): these
    // tests check that the peer starts and answers, and a peer process starting under a
    // loaded machine is not the subject. A second failure fails the test.
    let raw = match exchange(peer.port(), &request) {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            eprintln!(
                "the peer reset the connection once ({e}); trying again\n{}",
                log()
            );
            exchange(peer.port(), &request)
        }
        other => other,
    }
    .unwrap_or_else(|e| panic!("exchange with the peer: {e}\n{}", log()));
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header block in {raw:?}\n{}", log()));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let rest = &raw[split + 4..];
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let header = |name: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_ascii_lowercase())
    };
    let chunked = header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    let body = String::from_utf8(body).expect("a UTF-8 body");
    (status, header("content-type").unwrap_or_default(), body)
}

/// Sends `request` on a new connection to `port` and reads the reply until the peer closes.
fn exchange(port: u16, request: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    Ok(raw)
}

/// Undoes HTTP/1.1 chunked transfer coding.
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..eol]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .expect("a chunk size");
        if size == 0 {
            break;
        }
        let data = &rest[eol + 2..];
        out.extend_from_slice(&data[..size]);
        rest = data[size..].strip_prefix(b"\r\n").unwrap_or(&data[size..]);
    }
    out
}

/// The JSON-RPC messages in a body: the body itself, or each SSE `data:` line holding JSON.
fn messages(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
            .collect()
    } else {
        vec![serde_json::from_str(body).expect("the body is JSON")]
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "brain-tests", "version": "0"}}})
}

fn assert_initializes(kind: PeerKind, server_name: &str) {
    let peer = Peer::start(kind).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(peer.kind(), kind);
    assert_eq!(peer.url(), format!("http://127.0.0.1:{}/mcp", peer.port()));
    let (status, content_type, body) = post(&peer, &[], &initialize());
    assert_eq!(status, 200, "body: {body}");
    let replies = messages(&content_type, &body);
    let reply = replies
        .iter()
        .find(|m| m["id"] == 1)
        .unwrap_or_else(|| panic!("no reply with id 1 in {body}"));
    assert_eq!(reply["jsonrpc"], "2.0");
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert_eq!(
        reply["result"]["serverInfo"]["name"], server_name,
        "{reply}"
    );
    assert!(
        reply["result"]["capabilities"]["tools"].is_object(),
        "{reply}"
    );
}

#[test]
fn everything_server_answers_initialize() {
    assert_initializes(PeerKind::Everything, "mcp-servers/everything");
}

#[test]
fn python_server_answers_initialize() {
    assert_initializes(PeerKind::PythonSdk, "brain-python-peer");
}

#[test]
fn rmcp_server_answers_initialize() {
    assert_initializes(PeerKind::Rmcp, "rmcp");
}

#[test]
fn python_server_answers_discover_without_a_session() {
    let peer = Peer::start(PeerKind::PythonSdk).unwrap_or_else(|e| panic!("{e}"));
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "brain-tests", "version": "0"}}}});
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    let (status, content_type, body) = post(&peer, &headers, &discover);
    assert_eq!(status, 200, "body: {body}");
    let reply = &messages(&content_type, &body)[0];
    assert_eq!(reply["id"], 7);
    let versions = reply["result"]["supportedVersions"]
        .as_array()
        .expect("versions");
    assert!(versions.iter().any(|v| v == "2026-07-28"), "{reply}");
}

#[test]
fn dropping_a_peer_stops_it() {
    let peer = Peer::start(PeerKind::Rmcp).unwrap_or_else(|e| panic!("{e}"));
    let port = peer.port();
    drop(peer);
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still accepts connections after the peer was dropped"
    );
}

#[test]
fn python_stdio_server_answers_initialize() {
    let command = Peer::python_stdio_command().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(command.args.last().map(String::as_str), Some("stdio"));
    let mut child = command
        .to_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the stdio server");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{}", initialize()).expect("write initialize");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the reply");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let reply: Value = serde_json::from_str(&line).expect("a JSON line");
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["serverInfo"]["name"], "brain-python-peer");
}
