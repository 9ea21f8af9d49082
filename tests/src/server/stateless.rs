//! The 2026-07-28 era: no sessions; each request names its version and capabilities in
//! `_meta` and repeats the routing facts in headers.

use std::sync::Arc;

use base64::Engine as _;
use http::{HeaderMap, Response, StatusCode};
use serde_json::{Value, json};

use super::body::Body;
use super::config::Era;
use super::handshake::{self, VERSIONS};
use super::headers::header_str;
use super::rpc::{self, Msg};
use super::sse::reply_once;
use super::state::Shared;
use super::tools::{self, CallEra};

/// The one modern version served.
pub(crate) const VERSION: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// A request rejected before dispatch: code, message, optional data.
type Reject = (i64, String, Option<Value>);

fn supported(shared: &Shared) -> Vec<&'static str> {
    let mut v = vec![VERSION];
    if shared.era() == Era::Both {
        v.extend(VERSIONS);
    }
    v
}

/// Decodes a header value that may use the `=?base64?...?=` form.
fn decode_header(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|s| s.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(raw.to_owned()),
    }
}

fn mismatch(what: &str) -> Reject {
    (
        rpc::HEADER_MISMATCH,
        format!("Header mismatch: {what}"),
        None,
    )
}

/// Checks the envelope in the order the conformance mock does: version header, `_meta`,
/// header against `_meta`, version served, then `Mcp-Method` and `Mcp-Name`.
fn validate(
    shared: &Shared,
    headers: &HeaderMap,
    method: &str,
    params: &Value,
) -> Result<(), Reject> {
    let Some(header_version) = header_str(headers, "mcp-protocol-version") else {
        return Err(mismatch("missing MCP-Protocol-Version header"));
    };
    let meta = params.get("_meta");
    let meta_version = meta
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let caps = meta.and_then(|m| m.get(META_CAPS));
    let (Some(meta_version), Some(Value::Object(_))) = (meta_version, caps) else {
        return Err((
            rpc::INVALID_PARAMS,
            format!("Invalid params: _meta must carry {META_VERSION} and {META_CAPS}"),
            None,
        ));
    };
    if meta_version != header_version {
        return Err(mismatch(
            "MCP-Protocol-Version differs from _meta protocolVersion",
        ));
    }
    if meta_version != VERSION {
        return Err((
            rpc::UNSUPPORTED_VERSION,
            format!("Unsupported protocol version: {meta_version}"),
            Some(json!({"supported": supported(shared), "requested": meta_version})),
        ));
    }
    if header_str(headers, "mcp-method") != Some(method) {
        return Err(mismatch("Mcp-Method missing or not the body's method"));
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        let body_name = params.get(key).and_then(Value::as_str);
        let header_name = header_str(headers, "mcp-name").and_then(decode_header);
        if body_name.is_none() || header_name.as_deref() != body_name {
            return Err(mismatch("Mcp-Name missing or not the body's name"));
        }
    }
    Ok(())
}

fn reject(id: &Value, (code, message, data): Reject) -> Response<Body> {
    rpc::error_response(rpc::modern_status(code), Some(id), code, &message, data)
}

/// Handles a POST in the 2026 era.
pub(crate) async fn post(shared: &Arc<Shared>, headers: &HeaderMap, msg: Value) -> Response<Body> {
    let (id, method, params) = match rpc::classify(&msg) {
        Msg::Request { id, method, params } => (id, method, params),
        Msg::Notification => return rpc::status(StatusCode::ACCEPTED),
        Msg::Response => {
            // No server requests exist in this era, but the `ping_first` fault sends one.
            shared.deliver_answer(&msg);
            return rpc::status(StatusCode::ACCEPTED);
        }
        Msg::Invalid => {
            return rpc::error_response(
                StatusCode::BAD_REQUEST,
                None,
                rpc::INVALID_REQUEST,
                "Invalid Request",
                None,
            );
        }
    };
    if method == "initialize" {
        let requested = params
            .get("protocolVersion")
            .cloned()
            .unwrap_or(Value::Null);
        return reject(
            &id,
            (
                rpc::UNSUPPORTED_VERSION,
                format!(
                    "Unsupported protocol version: this server has no initialize; use {VERSION}"
                ),
                Some(json!({"supported": supported(shared), "requested": requested})),
            ),
        );
    }
    if let Err(r) = validate(shared, headers, &method, &params) {
        return reject(&id, r);
    }
    match method.as_str() {
        "server/discover" => reply_once(shared, &rpc::result(&id, discover(shared))),
        "tools/list" => reply_once(shared, &tools::list(shared, &id, &params, true)),
        "tools/call" => tools::call(shared, id, params, CallEra::Stateless, false).await,
        _ => reject(
            &id,
            (rpc::METHOD_NOT_FOUND, "Method not found".into(), None),
        ),
    }
}

fn discover(shared: &Shared) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": supported(shared),
        "capabilities": {"tools": {"listChanged": false}},
        "instructions": "A test server for Brain's MCP call path.",
        "ttlMs": 60_000,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": handshake::server_info()},
    })
}
