//! HTTP front door: records the request, checks the generic HTTP rules and hands the
//! message to the era that should answer it.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::Value;

use super::body::Body;
use super::config::Era;
use super::headers::header_str;
use super::hook::Seen;
use super::rpc;
use super::state::Shared;
use super::stats::Received;
use super::{handshake, stateless};

/// Largest request body accepted.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The MCP endpoint path.
pub(crate) const PATH: &str = "/mcp";

fn record(
    shared: &Shared,
    method: &Method,
    headers: &HeaderMap,
    body: &Value,
    raw: &[u8],
) -> usize {
    if !shared.stats.keeps() {
        return shared.stats.counted(method.as_str());
    }
    let h = |name: &str| header_str(headers, name).map(str::to_owned);
    shared.stats.received(Received {
        http_method: method.as_str().to_owned(),
        method: body
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned),
        id: body.get("id").cloned(),
        body: body.clone(),
        raw_body: String::from_utf8_lossy(raw).into_owned(),
        session_id: h("mcp-session-id"),
        protocol_version: h("mcp-protocol-version"),
        mcp_method: h("mcp-method"),
        mcp_name: h("mcp-name"),
        accept: h("accept"),
        authorization: h("authorization"),
        status: None,
        headers: headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
    })
}

fn accepts_both(headers: &HeaderMap) -> bool {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    let has = |ty: &str| {
        accept.split(',').any(|part| {
            part.trim()
                .split(';')
                .next()
                .is_some_and(|t| t.trim() == ty)
        })
    };
    (has("application/json") || has("*/*")) && (has("text/event-stream") || has("*/*"))
}

/// Whether a message on a dual-era endpoint belongs to the 2026 era.
fn is_modern(headers: &HeaderMap, msg: &Value) -> bool {
    if msg.get("method").and_then(Value::as_str) == Some("initialize")
        || headers.contains_key("mcp-session-id")
    {
        return false;
    }
    let header_modern =
        header_str(headers, "mcp-protocol-version").is_some_and(|v| v >= "2026-07-28");
    header_modern
        || msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .is_some()
}

/// Answers one HTTP request.
pub(crate) async fn handle(req: Request<Incoming>, shared: Arc<Shared>) -> Response<Body> {
    if req.uri().path() != PATH {
        return rpc::status(StatusCode::NOT_FOUND);
    }
    let (parts, body) = req.into_parts();
    let bytes = if parts.method == Method::POST {
        match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return rpc::status(StatusCode::PAYLOAD_TOO_LARGE),
        }
    } else {
        Bytes::new()
    };
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let index = record(
        &shared,
        &parts.method,
        &parts.headers,
        parsed.as_ref().unwrap_or(&Value::Null),
        &bytes,
    );
    let resp = answer(&shared, &parts, parsed).await;
    shared.stats.answered(index, resp.status().as_u16());
    resp
}

async fn answer(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    parsed: Option<Value>,
) -> Response<Body> {
    if let Some(hook) = &shared.config.hook {
        let seen = Seen {
            http_method: parts.method.as_str(),
            headers: &parts.headers,
            body: parsed.as_ref().unwrap_or(&Value::Null),
        };
        if let Some(reply) = hook.answer(&seen) {
            return reply.into_response();
        }
    }
    if let Some(token) = &shared.config.require_token {
        let expected = format!("Bearer {token}");
        if header_str(&parts.headers, "authorization") != Some(expected.as_str()) {
            let mut resp = rpc::status(StatusCode::UNAUTHORIZED);
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"mcp\""),
            );
            return resp;
        }
    }
    let era = shared.era();
    let method = parsed
        .as_ref()
        .and_then(|m| m.get("method"))
        .and_then(Value::as_str);
    if method.is_some() && method == shared.config.stall_method {
        std::future::pending::<()>().await;
    }
    match parts.method {
        Method::POST => {
            if !accepts_both(&parts.headers) {
                return rpc::error_response(
                    StatusCode::NOT_ACCEPTABLE,
                    None,
                    rpc::SERVER_ERROR,
                    "Not Acceptable: Client must accept both application/json and text/event-stream",
                    None,
                );
            }
            let Some(msg) = parsed else {
                return rpc::error_response(
                    StatusCode::BAD_REQUEST,
                    None,
                    rpc::PARSE_ERROR,
                    "Parse error",
                    None,
                );
            };
            let modern = match era {
                Era::Handshake => false,
                Era::Stateless => true,
                Era::Both => is_modern(&parts.headers, &msg),
            };
            if modern {
                stateless::post(shared, &parts.headers, msg).await
            } else {
                handshake::post(shared, &parts.headers, msg).await
            }
        }
        Method::DELETE if era != Era::Stateless => {
            if shared.config.stall_delete {
                std::future::pending::<()>().await;
            }
            handshake::delete(shared, &parts.headers)
        }
        _ => {
            let mut resp = rpc::status(StatusCode::METHOD_NOT_ALLOWED);
            let allow = if era == Era::Stateless {
                "POST"
            } else {
                "POST, DELETE"
            };
            resp.headers_mut()
                .insert(header::ALLOW, header::HeaderValue::from_static(allow));
            resp
        }
    }
}
