//! The handshake era (2025-11-25 and older): `initialize`, sessions, `DELETE`.

use std::sync::Arc;

use http::{HeaderMap, Response, StatusCode, header::HeaderValue};
use serde_json::{Value, json};

use super::body::Body;
use super::headers::header_str;
use super::rpc::{self, Msg};
use super::sse::reply_once;
use super::state::Shared;
use super::tools::{self, CallEra};

/// Versions this era negotiates, newest first.
pub(crate) const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The name and version this server reports.
pub(crate) fn server_info() -> Value {
    json!({"name": "brain-test-server", "version": env!("CARGO_PKG_VERSION")})
}

fn no_session() -> Response<Body> {
    rpc::error_response(
        StatusCode::BAD_REQUEST,
        None,
        rpc::SERVER_ERROR,
        "Bad Request: No valid session ID provided",
        None,
    )
}

/// Handles a POST in the handshake era.
pub(crate) async fn post(shared: &Arc<Shared>, headers: &HeaderMap, msg: Value) -> Response<Body> {
    let kind = rpc::classify(&msg);
    if let Msg::Request { id, method, params } = &kind
        && method == "initialize"
    {
        return initialize(shared, id, params).await;
    }
    let Some(sid) = header_str(headers, "mcp-session-id") else {
        return no_session();
    };
    let Some(version) = shared.session_version(sid) else {
        return rpc::error_response(
            StatusCode::NOT_FOUND,
            None,
            rpc::SESSION_NOT_FOUND,
            "Session not found",
            None,
        );
    };
    if let Some(v) = header_str(headers, "mcp-protocol-version")
        && !VERSIONS.contains(&v)
    {
        return rpc::error_response(
            StatusCode::BAD_REQUEST,
            None,
            rpc::SERVER_ERROR,
            &format!("Bad Request: Unsupported protocol version: {v}"),
            None,
        );
    }
    match kind {
        Msg::Notification => rpc::status(StatusCode::ACCEPTED),
        Msg::Response => {
            shared.deliver_answer(&msg);
            rpc::status(StatusCode::ACCEPTED)
        }
        Msg::Invalid => rpc::error_response(
            StatusCode::BAD_REQUEST,
            None,
            rpc::INVALID_REQUEST,
            "Invalid Request",
            None,
        ),
        Msg::Request { id, method, params } => match method.as_str() {
            "ping" => reply_once(shared, &rpc::result(&id, json!({}))),
            "tools/list" => reply_once(shared, &tools::list(shared, &id, &params, false)),
            "tools/call" => {
                let priming = shared.config.sse_priming && version.as_str() >= "2025-11-25";
                tools::call(shared, id, params, CallEra::Handshake, priming).await
            }
            _ => reply_once(
                shared,
                &rpc::error(Some(&id), rpc::METHOD_NOT_FOUND, "Method not found", None),
            ),
        },
    }
}

async fn initialize(shared: &Arc<Shared>, id: &Value, params: &Value) -> Response<Body> {
    if shared.config.initialize_fails {
        return rpc::error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(id),
            rpc::INTERNAL_ERROR,
            "injected initialize failure",
            None,
        );
    }
    if shared.config.stall_initialize {
        std::future::pending::<()>().await;
    }
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = requested
        .filter(|v| VERSIONS.contains(v))
        .unwrap_or(VERSIONS[0]);
    let sid = shared.open_session(version);
    if let Some(delay) = shared.config.initialize_delay {
        tokio::time::sleep(delay).await;
    }
    let result = json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": server_info(),
        "instructions": "A test server for Brain's MCP call path.",
    });
    let mut resp = reply_once(shared, &rpc::result(id, result));
    if let Ok(value) = HeaderValue::from_str(&sid) {
        resp.headers_mut().insert("mcp-session-id", value);
    }
    resp
}

/// Handles a `DELETE`: ends the session named in `Mcp-Session-Id`.
pub(crate) fn delete(shared: &Shared, headers: &HeaderMap) -> Response<Body> {
    match header_str(headers, "mcp-session-id") {
        None => no_session(),
        Some(sid) if shared.close_session(sid) => rpc::status(StatusCode::OK),
        Some(_) => rpc::error_response(
            StatusCode::NOT_FOUND,
            None,
            rpc::SESSION_NOT_FOUND,
            "Session not found",
            None,
        ),
    }
}
