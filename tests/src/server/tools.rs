//! `tools/call`: runs a tool in its own task and streams its messages through an [`Out`].

use std::sync::Arc;
use std::time::Duration;

use http::{Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::body::Body;
use super::catalog;
use super::faults;
use super::rpc;
use super::sse::Out;
use super::state::Shared;

pub(crate) use super::catalog::list;

/// A 1x1 RGBA PNG.
pub(crate) const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Which era the call arrived in.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum CallEra {
    /// Inside a handshake-era session.
    Handshake,
    /// A 2026-era request.
    Stateless,
}

/// One `tools/call`.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) args: Value,
    pub(crate) params: Value,
    pub(crate) era: CallEra,
    pub(crate) progress_token: Option<Value>,
}

/// How a tool ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A `CallToolResult`.
    Result(Value),
    /// A JSON-RPC error.
    Error(i64, String),
    /// The tool wrote (or deliberately withheld) its reply itself.
    Done,
}

/// A text-only result.
pub(crate) fn text(text: &str, is_error: bool) -> Outcome {
    Outcome::Result(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
}

/// Reads integer argument `key` (default when absent), capped at `max`.
pub(crate) fn arg_u64(
    call: &Call,
    key: &str,
    default: Option<u64>,
    max: u64,
) -> Result<u64, Outcome> {
    match call.args.get(key) {
        None | Some(Value::Null) => {
            default.ok_or_else(|| invalid(&format!("missing argument `{key}`")))
        }
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(n),
            _ => Err(invalid(&format!(
                "argument `{key}` must be an integer in 0..={max}"
            ))),
        },
    }
}

fn invalid(msg: &str) -> Outcome {
    Outcome::Error(rpc::INVALID_PARAMS, format!("Invalid params: {msg}"))
}

fn status_for(era: CallEra, code: i64) -> StatusCode {
    match era {
        CallEra::Handshake => StatusCode::OK,
        CallEra::Stateless => rpc::modern_status(code),
    }
}

/// Answers a `tools/call` request.
pub(crate) async fn call(
    shared: &Arc<Shared>,
    id: Value,
    params: Value,
    era: CallEra,
    priming: bool,
) -> Response<Body> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !catalog::offers(shared, name) {
        let code = rpc::INVALID_PARAMS;
        let msg = format!("Unknown tool: {name}");
        return rpc::error_response(status_for(era, code), Some(&id), code, &msg, None);
    }
    let call = Call {
        name: name.to_owned(),
        args: params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({})),
        progress_token: rpc::progress_token(&params),
        params,
        era,
    };
    let (head_tx, head_rx) = oneshot::channel();
    let out = Out::new(shared.clone(), id, priming, head_tx);
    tokio::spawn(run(call, out));
    head_rx
        .await
        .unwrap_or_else(|_| rpc::status(StatusCode::INTERNAL_SERVER_ERROR))
}

async fn run(call: Call, mut out: Out) {
    let outcome = match call.name.as_str() {
        "echo" => match call.args.get("text").and_then(Value::as_str) {
            Some(t) => text(t, false),
            None => invalid("missing argument `text`"),
        },
        "progress" => progress(&call, &mut out).await,
        "image" => Outcome::Result(json!({
            "content": [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]
        })),
        "structured" => structured(&call),
        "fail" => text("the tool failed, as asked", true),
        "elicit" => elicit(&call, &mut out).await,
        _ => faults::run(&call, &mut out).await,
    };
    let id = out.request_id().clone();
    match outcome {
        Outcome::Result(mut result) => {
            if call.era == CallEra::Stateless && result.get("resultType").is_none() {
                result["resultType"] = json!("complete");
            }
            out.finish(rpc::result(&id, result)).await;
        }
        Outcome::Error(code, msg) => {
            let err = rpc::error(Some(&id), code, &msg, None);
            out.finish_with_status(status_for(call.era, code), err)
                .await;
        }
        Outcome::Done => {}
    }
}

async fn progress(call: &Call, out: &mut Out) -> Outcome {
    let steps = match arg_u64(call, "steps", Some(3), 100_000) {
        Ok(n) => n.max(1),
        Err(e) => return e,
    };
    let delay = match arg_u64(call, "delay_ms", Some(10), 60_000) {
        Ok(n) => Duration::from_millis(n),
        Err(e) => return e,
    };
    for i in 1..=steps {
        if let Some(token) = &call.progress_token {
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": i, "total": steps, "message": format!("step {i}")},
            });
            if !out.event(&note).await {
                return Outcome::Done;
            }
        }
        // A zero sleep still waits for the timer's next tick (about 1 ms).
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
    text("done", false)
}

fn structured(call: &Call) -> Outcome {
    let (Some(a), Some(b)) = (
        call.args.get("a").and_then(Value::as_f64),
        call.args.get("b").and_then(Value::as_f64),
    ) else {
        return invalid("`a` and `b` must be numbers");
    };
    let sum = a + b;
    // Integral sums stay integers in JSON, as a client comparing values would expect.
    let sum = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
        json!(sum as i64)
    } else {
        json!(sum)
    };
    let value = json!({"sum": sum});
    Outcome::Result(json!({
        "content": [{"type": "text", "text": value.to_string()}],
        "structuredContent": value,
    }))
}

fn form_request() -> Value {
    json!({
        "mode": "form",
        "message": "Proceed with the action?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    })
}

/// Handshake era: asks over the stream. 2026 era: answers `input_required`.
async fn elicit(call: &Call, out: &mut Out) -> Outcome {
    if call.era == CallEra::Stateless {
        if let Some(answers) = call.params.get("inputResponses") {
            return text(&format!("got input: {answers}"), false);
        }
        return Outcome::Result(json!({
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": form_request()}},
            "requestState": "elicit-round-1",
        }));
    }
    let Some(answer) = out.request("elicitation/create", form_request()).await else {
        return Outcome::Done;
    };
    if let Some(err) = answer.get("error") {
        return text(&format!("elicitation refused: {err}"), true);
    }
    match answer.pointer("/result/action").and_then(Value::as_str) {
        Some("accept") => {
            let content = answer
                .pointer("/result/content")
                .cloned()
                .unwrap_or(Value::Null);
            text(&format!("accepted: {content}"), false)
        }
        other => text(
            &format!("not accepted: {}", other.unwrap_or("no action")),
            true,
        ),
    }
}
