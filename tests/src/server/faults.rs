//! Tools that misbehave on purpose, for the failure tests of the call path.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, header};
use serde_json::json;

use super::body::{Body, Chunk};
use super::config::Reply;
use super::sse::Out;
use super::tools::{Call, CallEra, Outcome, arg_u64, text};

/// The largest `huge` result, so a typo cannot keep the server busy for hours.
const HUGE_MAX: u64 = 1 << 32;
/// Filler for `huge`, sent repeatedly instead of ever being allocated whole.
static FILL: [u8; 16 * 1024] = [b'x'; 16 * 1024];

/// Runs fault tool `call.name`.
pub(crate) async fn run(call: &Call, out: &mut Out) -> Outcome {
    match call.name.as_str() {
        "hang" => hang(out).await,
        "drop_mid" => drop_mid(out).await,
        "huge" => match arg_u64(call, "bytes", None, HUGE_MAX) {
            Ok(n) => huge(call, out, n).await,
            Err(e) => e,
        },
        "audio" => Outcome::Result(json!({
            "content": [{"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}]
        })),
        "resource_link" => Outcome::Result(json!({
            "content": [{"type": "resource_link", "uri": "file:///tmp/example.txt", "name": "example.txt", "mimeType": "text/plain"}]
        })),
        "bad_structured" => {
            let value = json!({"sum": "not a number"});
            Outcome::Result(json!({
                "content": [{"type": "text", "text": value.to_string()}],
                "structuredContent": value,
            }))
        }
        "rpc_error" => Outcome::Error(-32603, "Internal error (injected)".into()),
        "ping_first" => match out.request("ping", json!({})).await {
            None => Outcome::Done,
            Some(answer) if answer.get("result").is_some() => text("pong received", false),
            Some(_) => text("the ping was answered with an error", true),
        },
        "sampling" => {
            let params = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi."}}],
                "maxTokens": 16,
            });
            ask(out, "sampling/createMessage", params).await
        }
        "roots" => ask(out, "roots/list", json!({})).await,
        "bad_progress" => bad_progress(call, out).await,
        "logging" => {
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "logger": "test-server", "data": "about to answer"},
            });
            if out.event(&note).await {
                text("logged", false)
            } else {
                Outcome::Done
            }
        }
        _ => match arg_u64(call, "ms", None, 600_000) {
            Ok(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text(&format!("slept {ms} ms"), false)
            }
            Err(e) => e,
        },
    }
}

/// Sends server request `method` and reports what the client answered.
async fn ask(out: &mut Out, method: &str, params: serde_json::Value) -> Outcome {
    match out.request(method, params).await {
        None => Outcome::Done,
        Some(answer) => match answer.get("error") {
            Some(err) => text(&format!("{method} refused: {err}"), true),
            None => text(&format!("{method} answered: {}", answer["result"]), false),
        },
    }
}

/// Progress that repeats and goes backwards, which clients must drop.
async fn bad_progress(call: &Call, out: &mut Out) -> Outcome {
    if let Some(token) = &call.progress_token {
        for value in [1, 1, 3, 2, 4] {
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": value, "total": 4, "message": format!("value {value}")},
            });
            if !out.event(&note).await {
                return Outcome::Done;
            }
        }
    }
    text("done", false)
}

/// Opens the stream and keeps it open, with keep-alive comments so a closed client is noticed.
async fn hang(out: &mut Out) -> Outcome {
    out.open_stream();
    while out.comment().await {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Outcome::Done
}

/// A response head for a raw reply framed as the config says.
fn raw_head(out: &mut Out) -> tokio::sync::mpsc::Sender<Chunk> {
    let (tx, body) = Body::channel();
    let mut resp = Response::new(body);
    let ty = match out.shared().config.reply {
        Reply::Json => "application/json",
        Reply::Sse => "text/event-stream",
    };
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(ty));
    out.respond(resp);
    tx
}

fn framing(out: &Out) -> (&'static str, &'static str) {
    match out.shared().config.reply {
        Reply::Json => ("", ""),
        Reply::Sse => ("event: message\ndata: ", "\n\n"),
    }
}

/// Sends the head and part of the body, then aborts the connection.
async fn drop_mid(out: &mut Out) -> Outcome {
    let (open, _) = framing(out);
    let id = out.request_id().clone();
    let tx = raw_head(out);
    let partial = format!(
        "{open}{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"cut her"
    );
    if tx.send(Ok(Bytes::from(partial))).await.is_ok() {
        // Let hyper flush what was sent before the error makes it drop the connection.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let cut = io::Error::new(io::ErrorKind::ConnectionAborted, "drop_mid: injected");
        let _ = tx.send(Err(cut)).await;
    }
    Outcome::Done
}

/// Streams a text result of `n` characters without holding it in memory.
async fn huge(call: &Call, out: &mut Out, n: u64) -> Outcome {
    let (open, close) = framing(out);
    let id = out.request_id().clone();
    let result_type = match call.era {
        CallEra::Stateless => ",\"resultType\":\"complete\"",
        CallEra::Handshake => "",
    };
    let tx = raw_head(out);
    let head = format!(
        "{open}{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
    );
    let tail = format!("\"}}],\"isError\":false{result_type}}}}}{close}");
    let mut left = n;
    let mut ok = tx.send(Ok(Bytes::from(head))).await.is_ok();
    while ok && left > 0 {
        let len = usize::try_from(left).map_or(FILL.len(), |l| l.min(FILL.len()));
        ok = tx.send(Ok(Bytes::from_static(&FILL[..len]))).await.is_ok();
        left -= len as u64;
    }
    if ok {
        let _ = tx.send(Ok(Bytes::from(tail))).await;
    } else {
        out.shared().stats.abandoned(id);
    }
    Outcome::Done
}
