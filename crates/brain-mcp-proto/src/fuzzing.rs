//! Entry points for fuzzers and property tests. Not a stable API.

use serde_json::value::RawValue;

use crate::client::Framing;
use crate::jsonrpc::{Message, decode};
use crate::mcp::{self, methods};
use crate::version::ProtocolVersion;

/// Runs every decoder of this crate over `bytes`; must never panic.
///
/// Decodes the envelope, then each message's params or result as every
/// typed MCP value that could appear there, and re-encodes what decoded.
pub fn decode_message(bytes: &[u8]) {
    if let Ok(incoming) = decode(bytes) {
        for message in incoming {
            exercise(&message);
        }
    }
    if let Ok(parts) = crate::jsonrpc::raw_messages(bytes) {
        for raw in parts {
            if let Ok(message) = crate::jsonrpc::decode_raw(raw) {
                exercise(&message);
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            let _ = crate::headers::param_headers(&value);
            let _ = crate::headers::encode_header_value(&value);
        }
        let _ = crate::headers::decode_header_value(text);
        let _ = ProtocolVersion::parse(text);
        let _ = crate::headers::is_valid_session_id(text);
        let _ = mcp::is_valid_tool_name(text);
    }
}

fn exercise(message: &Message<'_>) {
    match message {
        Message::Request(r) => {
            let _ = crate::jsonrpc::encode_request(&r.id, &r.method, &r.params);
            if let Some(p) = r.params {
                typed_params(&r.method, p);
            }
        }
        Message::Notification(n) => {
            let _ = crate::jsonrpc::encode_notification(&n.method, n.params);
            if let Some(p) = n.params {
                typed_params(&n.method, p);
            }
        }
        Message::Response(r) => {
            let _ = crate::jsonrpc::encode_response(&r.id, r.result);
            results(r.result);
        }
        Message::Error(e) => {
            let data = e
                .error
                .data
                .and_then(|d| serde_json::from_str(d.get()).ok());
            let _ = crate::jsonrpc::encode_error(
                e.id.as_ref(),
                e.error.code,
                &e.error.message,
                data.as_ref(),
            );
            if let Some(d) = e.error.data {
                try_all::<mcp::UnsupportedProtocolVersionData>(d);
                try_all::<mcp::MissingRequiredClientCapabilityData>(d);
                try_all::<mcp::HeaderMismatchData>(d);
                try_all::<mcp::UrlElicitationRequiredData>(d);
            }
        }
    }
}

fn try_all<T: serde::Serialize + for<'de> serde::Deserialize<'de>>(raw: &RawValue) {
    if let Ok(value) = mcp::parse::<T>(raw) {
        let _ = serde_json::to_vec(&value);
    }
}

fn typed_params(method: &str, raw: &RawValue) {
    match method {
        methods::INITIALIZE => try_all::<mcp::InitializeParams>(raw),
        methods::TOOLS_LIST => try_all::<mcp::ListToolsParams>(raw),
        methods::TOOLS_CALL => try_all::<mcp::CallToolParams>(raw),
        methods::PROGRESS => try_all::<mcp::ProgressParams>(raw),
        methods::CANCELLED => try_all::<mcp::CancelledParams>(raw),
        methods::MESSAGE => try_all::<mcp::LoggingMessageParams>(raw),
        methods::ELICITATION_CREATE => try_all::<mcp::ElicitRequestParams>(raw),
        methods::SAMPLING_CREATE_MESSAGE => try_all::<mcp::CreateMessageRequestParams>(raw),
        methods::ELICITATION_COMPLETE => try_all::<mcp::ElicitationCompleteParams>(raw),
        methods::LOGGING_SET_LEVEL => try_all::<mcp::SetLevelParams>(raw),
        _ => try_all::<mcp::EmptyParams>(raw),
    }
}

fn results(raw: &RawValue) {
    try_all::<mcp::InitializeResult>(raw);
    try_all::<mcp::DiscoverResult>(raw);
    try_all::<mcp::ListToolsResult>(raw);
    try_all::<mcp::CallToolResult>(raw);
    try_all::<mcp::InputRequiredResult>(raw);
    try_all::<mcp::ElicitResult>(raw);
    try_all::<mcp::CreateMessageResult>(raw);
    try_all::<mcp::ListRootsResult>(raw);
    try_all::<mcp::EmptyResult>(raw);
    if let Ok(mcp::CallToolResponse::InputRequired(ir)) = mcp::CallToolResponse::decode(raw) {
        let _ = ir.requests();
    }
    if let Ok(list) = mcp::parse::<mcp::ListToolsResult>(raw) {
        for tool in &list.tools {
            if let Ok(schema) = tool.input_schema_value() {
                let _ = crate::headers::param_headers(&schema);
            }
        }
    }
}

/// A framing of each era, as a call would have it: a handshake-era session before its
/// version is known, and the current 2026 era. A fuzzer outside the core runs a result
/// through both without naming an era itself.
pub fn framings() -> [Framing; 2] {
    [
        Framing::before_session(),
        Framing::Stateless(ProtocolVersion::V2026_07_28),
    ]
}
