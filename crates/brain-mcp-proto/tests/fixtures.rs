//! Round trips of real traffic captured from real MCP servers.
//!
//! Every message in `tests/fixtures/<peer>/<scenario>.jsonl` is decoded,
//! re-encoded, and decoded into the typed value its method implies (results
//! are paired with the request of the same id sent the other way). Each
//! typed value must re-encode to JSON equal to what was on the wire.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test

mod common;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use brain_mcp_proto::jsonrpc::{
    ErrorCode, Incoming, Message, RequestId, decode, encode_error, encode_request,
};
use brain_mcp_proto::mcp::{self, CallToolResponse, ContentBlock, methods};
use brain_mcp_proto::{headers, jsonrpc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

/// The fixtures are committed; fewer files than this means they went missing.
const MIN_FIXTURE_FILES: usize = 5;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            jsonl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// What the whole fixture set exercised, checked against the list.
type Coverage = BTreeSet<&'static str>;

const REQUIRED_COVERAGE: &[&str] = &[
    "initialize exchange",
    "server/discover exchange",
    "paginated tools/list",
    "tools/call answered as JSON",
    "tools/call answered as SSE with progress",
    "image result",
    "structured result",
    "isError result",
    "elicitation request from a server",
    "input_required result",
];

/// Decodes `raw` as `T` and checks it re-encodes to the same JSON.
fn typed<T: Serialize + DeserializeOwned>(
    raw: &RawValue,
    errors: &mut String,
    at: &str,
) -> Option<T> {
    let value: T = match mcp::parse(raw) {
        Ok(v) => v,
        Err(e) => {
            let _ = writeln!(errors, "{at}: {e}");
            return None;
        }
    };
    let original: Value = serde_json::from_str(raw.get()).unwrap();
    let back = serde_json::to_value(&value).unwrap();
    if !common::same_json(&original, &back) {
        let _ = writeln!(
            errors,
            "{at}: {} re-encodes differently\n  wire: {original}\n  ours: {back}",
            std::any::type_name::<T>()
        );
    }
    Some(value)
}

struct Line {
    dir: String,
    content_type: Option<String>,
    message: Box<RawValue>,
}

fn read_lines(path: &Path, errors: &mut String) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        #[derive(serde::Deserialize)]
        struct Wire {
            dir: String,
            http: Option<Http>,
            message: Box<RawValue>,
        }
        #[derive(serde::Deserialize)]
        struct Http {
            content_type: Option<String>,
        }
        match serde_json::from_str::<Wire>(line) {
            Ok(w) => lines.push(Line {
                dir: w.dir,
                content_type: w.http.and_then(|h| h.content_type),
                message: w.message,
            }),
            Err(e) => {
                let _ = writeln!(
                    errors,
                    "{}:{}: not a fixture line: {e}",
                    path.display(),
                    n + 1
                );
            }
        }
    }
    lines
}

/// The envelope re-encoded by our encoders must equal the original.
fn envelope_round_trip(message: &Message<'_>, original: &Value, errors: &mut String, at: &str) {
    let bytes = match message {
        Message::Request(r) => encode_request(&r.id, &r.method, &r.params).unwrap(),
        Message::Notification(n) => jsonrpc::encode_notification(&n.method, n.params).unwrap(),
        Message::Response(r) => jsonrpc::encode_response(&r.id, r.result).unwrap(),
        Message::Error(e) => {
            let data = e
                .error
                .data
                .map(|d| serde_json::from_str::<Value>(d.get()).unwrap());
            encode_error(e.id.as_ref(), e.error.code, &e.error.message, data.as_ref())
        }
    };
    assert!(!bytes.contains(&b'\n'));
    let mut expected = original.clone();
    if let Some(map) = expected.as_object_mut() {
        // We write no `params: null` and no `id: null`; both read as absent.
        map.retain(|k, v| !((k == "params" || k == "id") && v.is_null()));
    }
    let ours: Value = serde_json::from_slice(&bytes).unwrap();
    if !common::same_json(&ours, &expected) {
        let _ = writeln!(
            errors,
            "{at}: envelope re-encodes differently\n  wire: {original}\n  ours: {ours}"
        );
    }
}

fn check_params(method: &str, raw: &RawValue, errors: &mut String, at: &str, cov: &mut Coverage) {
    match method {
        methods::INITIALIZE => drop(typed::<mcp::InitializeParams>(raw, errors, at)),
        methods::TOOLS_LIST => drop(typed::<mcp::ListToolsParams>(raw, errors, at)),
        methods::TOOLS_CALL => drop(typed::<mcp::CallToolParams>(raw, errors, at)),
        methods::PROGRESS => {
            if typed::<mcp::ProgressParams>(raw, errors, at).is_some() {
                cov.insert("progress notification");
            }
        }
        methods::CANCELLED => drop(typed::<mcp::CancelledParams>(raw, errors, at)),
        methods::MESSAGE => drop(typed::<mcp::LoggingMessageParams>(raw, errors, at)),
        methods::ELICITATION_CREATE => {
            if typed::<mcp::ElicitRequestParams>(raw, errors, at).is_some() {
                cov.insert("elicitation request from a server");
            }
        }
        methods::SAMPLING_CREATE_MESSAGE => {
            drop(typed::<mcp::CreateMessageRequestParams>(raw, errors, at))
        }
        _ => drop(typed::<mcp::EmptyParams>(raw, errors, at)),
    }
}

fn check_call_result(result: &mcp::CallToolResult, cov: &mut Coverage) {
    if result.failed() {
        cov.insert("isError result");
    }
    if result.structured_content.is_some() {
        cov.insert("structured result");
    }
    for block in &result.content {
        match block {
            ContentBlock::Image(_) => drop(cov.insert("image result")),
            ContentBlock::Unknown(raw) => {
                panic!("a real server sent a block we do not model: {}", raw.get())
            }
            _ => {}
        }
    }
}

fn check_result(
    method: &str,
    raw: &RawValue,
    errors: &mut String,
    at: &str,
    cov: &mut Coverage,
    sse: bool,
) {
    match method {
        methods::INITIALIZE => {
            if let Some(r) = typed::<mcp::InitializeResult>(raw, errors, at) {
                cov.insert("initialize exchange");
                assert!(
                    brain_mcp_proto::version::negotiate_handshake(&r.protocol_version).is_ok(),
                    "{at}"
                );
            }
        }
        methods::SERVER_DISCOVER => {
            if let Some(r) = typed::<mcp::DiscoverResult>(raw, errors, at) {
                cov.insert("server/discover exchange");
                assert!(
                    brain_mcp_proto::version::pick_stateless(&r.supported_versions).is_some(),
                    "{at}"
                );
            }
        }
        methods::TOOLS_LIST => {
            if let Some(r) = typed::<mcp::ListToolsResult>(raw, errors, at) {
                if r.next_cursor.is_some() {
                    cov.insert("paginated tools/list");
                }
                for tool in &r.tools {
                    // Every real schema must at least be checkable.
                    let _ = headers::param_headers(&tool.input_schema_value().unwrap());
                }
            }
        }
        methods::TOOLS_CALL => match CallToolResponse::decode(raw) {
            Ok(CallToolResponse::Complete(_)) => {
                if let Some(r) = typed::<mcp::CallToolResult>(raw, errors, at) {
                    cov.insert(if sse {
                        "tools/call answered as SSE"
                    } else {
                        "tools/call answered as JSON"
                    });
                    check_call_result(&r, cov);
                }
            }
            Ok(CallToolResponse::InputRequired(_)) => {
                if let Some(r) = typed::<mcp::InputRequiredResult>(raw, errors, at) {
                    cov.insert("input_required result");
                    for (key, req) in r.requests() {
                        let req = req.unwrap_or_else(|e| panic!("{at}: input request {key}: {e}"));
                        if req.method == methods::ELICITATION_CREATE {
                            let params = req.params.as_deref().expect("elicitation params");
                            drop(typed::<mcp::ElicitRequestParams>(params, errors, at));
                        }
                    }
                }
            }
            Ok(CallToolResponse::Other { result_type, .. }) => {
                let _ = writeln!(errors, "{at}: unexpected resultType {result_type}");
            }
            Ok(other) => {
                let _ = writeln!(errors, "{at}: unexpected result {other:?}");
            }
            Err(e) => {
                let _ = writeln!(errors, "{at}: {e}");
            }
        },
        methods::PING => drop(typed::<mcp::EmptyResult>(raw, errors, at)),
        methods::ELICITATION_CREATE => drop(typed::<mcp::ElicitResult>(raw, errors, at)),
        methods::SAMPLING_CREATE_MESSAGE => {
            drop(typed::<mcp::CreateMessageResult>(raw, errors, at))
        }
        methods::ROOTS_LIST => drop(typed::<mcp::ListRootsResult>(raw, errors, at)),
        _ => {}
    }
}

fn check_error_data(code: ErrorCode, data: &RawValue, errors: &mut String, at: &str) {
    match code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => drop(
            typed::<mcp::UnsupportedProtocolVersionData>(data, errors, at),
        ),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => drop(typed::<
            mcp::MissingRequiredClientCapabilityData,
        >(data, errors, at)),
        ErrorCode::HEADER_MISMATCH => drop(typed::<mcp::HeaderMismatchData>(data, errors, at)),
        ErrorCode::URL_ELICITATION_REQUIRED => {
            drop(typed::<mcp::UrlElicitationRequiredData>(data, errors, at))
        }
        _ => {}
    }
}

/// Checks one file; returns how many messages it held.
fn check_file(path: &Path, errors: &mut String, cov: &mut Coverage) -> usize {
    let name = path
        .strip_prefix(fixtures_dir())
        .unwrap_or(path)
        .display()
        .to_string();
    // Pending requests by (direction they were sent in, id) -> method.
    let mut pending: HashMap<(String, RequestId), String> = HashMap::new();
    let mut progress_in_file = false;
    let mut count = 0;
    for (n, line) in read_lines(path, errors).into_iter().enumerate() {
        let at = format!("{name}:{}", n + 1);
        let original: Value = serde_json::from_str(line.message.get()).unwrap();
        let incoming = match decode(line.message.get().as_bytes()) {
            Ok(i) => i,
            Err(e) => {
                let _ = writeln!(errors, "{at}: does not decode: {e}");
                continue;
            }
        };
        let originals = match (&incoming, &original) {
            (Incoming::Batch(_), Value::Array(items)) => items.clone(),
            _ => vec![original.clone()],
        };
        let sse = line.content_type.as_deref() == Some("text/event-stream");
        for (message, original) in incoming.into_messages().iter().zip(&originals) {
            count += 1;
            envelope_round_trip(message, original, errors, &at);
            match message {
                Message::Request(r) => {
                    pending.insert((line.dir.clone(), r.id.clone()), r.method.to_string());
                    if let Some(p) = r.params {
                        check_params(&r.method, p, errors, &at, cov);
                    }
                }
                Message::Notification(n) => {
                    if n.method == methods::PROGRESS {
                        progress_in_file = true;
                    }
                    if let Some(p) = n.params {
                        check_params(&n.method, p, errors, &at, cov);
                    }
                }
                Message::Response(r) => {
                    let asked_by = if line.dir == "recv" { "send" } else { "recv" };
                    match pending.remove(&(asked_by.to_owned(), r.id.clone())) {
                        Some(method) => {
                            check_result(&method, r.result, errors, &at, cov, sse);
                            if method == methods::TOOLS_CALL && sse && progress_in_file {
                                cov.insert("tools/call answered as SSE with progress");
                            }
                        }
                        None => {
                            let _ = writeln!(errors, "{at}: response {} matches no request", r.id);
                        }
                    }
                }
                Message::Error(e) => {
                    if let Some(data) = e.error.data {
                        check_error_data(e.error.code, data, errors, &at);
                    }
                }
            }
        }
    }
    count
}

#[test]
fn fixtures_round_trip() {
    let dir = fixtures_dir();
    let mut files = Vec::new();
    jsonl_files(&dir, &mut files);
    files.sort();
    assert!(
        dir.join("README.md").exists(),
        "{} lacks its README.md",
        dir.display()
    );
    assert!(
        files.len() >= MIN_FIXTURE_FILES,
        "expected at least {MIN_FIXTURE_FILES} fixture files, found {}",
        files.len()
    );
    let mut errors = String::new();
    let mut coverage = Coverage::default();
    let mut messages = 0;
    for file in &files {
        messages += check_file(file, &mut errors, &mut coverage);
    }
    assert!(errors.is_empty(), "fixture problems:\n{errors}");
    let missing: Vec<_> = REQUIRED_COVERAGE
        .iter()
        .filter(|c| !coverage.contains(**c))
        .collect();
    assert!(
        missing.is_empty(),
        "fixtures do not cover: {missing:?} (saw {:?})",
        coverage
    );
    eprintln!("{} files, {messages} messages round-tripped", files.len());
}
