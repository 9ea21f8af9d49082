//! Answers the fault server cannot give: replies that are not MCP at all
//! (`protocol_error`), and a 2026 call refused for its protocol version.
//!
//! These use a tiny raw HTTP stub that answers every request with one fixed response, with
//! the era set to 2026 so the stub's first request is the call itself.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use brain_mcp_bind::Era;
use brain_mcp_proto::version::ProtocolVersion;
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};

/// Serves `status` with `body` to every request; returns the URL and the count of requests.
fn stub(status: &str, content_type: &str, body: &str) -> (String, Arc<AtomicUsize>) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stub");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (url, requests)
}

/// One call to a stub; returns the result, the requests the stub saw, and the era cached
/// for it afterwards.
async fn call_stub_era(
    status: &str,
    content_type: &str,
    body: &str,
) -> (serde_json::Value, usize, Option<Era>) {
    let (url, requests) = stub(status, content_type, body);
    let h = Harness::new();
    h.client
        .set_era(&url, Era::Stateless(ProtocolVersion::V2026_07_28));
    let out = call(&h, &binding(spec("echo", &url, "echo")), "p-1", json!({})).await;
    h.flush().await;
    (
        out.result,
        requests.load(Ordering::SeqCst),
        h.client.era(&url),
    )
}

async fn call_stub(status: &str, content_type: &str, body: &str) -> (serde_json::Value, usize) {
    let (result, requests, era) = call_stub_era(status, content_type, body).await;
    assert!(era.is_some(), "a protocol error keeps the era");
    (result, requests)
}

#[tokio::test]
async fn a_malformed_reply_is_a_protocol_error() {
    let (result, requests) = call_stub("200 OK", "application/json", "this is not json").await;
    assert_failure(&result, "protocol_error", true);
    assert_eq!(requests, 1, "sent once");
}

#[tokio::test]
async fn an_unexpected_status_is_a_protocol_error() {
    let (result, requests) = call_stub("418 I'm a teapot", "text/plain", "teapot").await;
    assert_failure(&result, "protocol_error", true);
    assert_eq!(requests, 1, "sent once");
}

#[tokio::test]
async fn a_reply_for_another_request_is_a_protocol_error() {
    let (result, requests) = call_stub(
        "200 OK",
        "application/json",
        r#"{"jsonrpc":"2.0","id":"someone-else","result":{"content":[]}}"#,
    )
    .await;
    assert_failure(&result, "protocol_error", true);
    assert_eq!(requests, 1, "sent once");
}

#[tokio::test]
async fn an_unsupported_version_answer_drops_the_cached_era_without_resending() {
    for code in [-32022, -32020] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code,
            "message": "refused", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}});
        let (result, requests, era) =
            call_stub_era("400 Bad Request", "application/json", &body.to_string()).await;
        let message = assert_failure(&result, "rpc_error", true);
        assert!(message.contains(&code.to_string()), "{message}");
        assert_eq!(requests, 1, "the call is not resent");
        assert_eq!(era, None, "error {code}: the next call probes again");
    }
}
