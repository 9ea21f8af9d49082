//! A task that asks for user input: a responder answers it as it answers a direct call
//! (2025-11-25 on the `tasks/result` stream, 2026 with `tasks/update`); without one the
//! call fails as `user_input_required` and the task is cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{McpClient, McpExecutor, Refusal, Responder, ServerRequest};
use brain_tests::peers::{Peer, PeerKind};
use brain_tests::server::{Era, RawReply, TestServer};
use brain_tools_core::{Binding, NoProgress, ToolCall, ToolResultEvent, run_call};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::call_support::{Harness, TENANT, binding, call, discovered};
use crate::hostile_support::hostile;

/// Answers every elicitation with `{"interpretation": "chosen"}`; records the methods.
#[derive(Default)]
struct Choosing {
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Responder for Choosing {
    async fn answer(&self, request: &ServerRequest<'_>) -> Result<Value, Refusal> {
        self.asked
            .lock()
            .expect("the log")
            .push(request.method.to_owned());
        Ok(json!({"action": "accept", "content": {"interpretation": "chosen"}}))
    }
}

/// Runs `binding` once with a responder installed.
async fn with_responder(binding: &Binding, args: Value) -> (ToolResultEvent, Arc<Choosing>) {
    let client = McpClient::new().expect("a client");
    let responder = Arc::new(Choosing::default());
    let executor = McpExecutor::with_responder(client.clone(), responder.clone());
    let call = ToolCall::new(TENANT, "s", "c-ask", args);
    let cancel = CancellationToken::new();
    let result = run_call(binding, call, &executor, &NoProgress, &cancel).await;
    assert!(client.flush(Duration::from_secs(10)).await);
    (result, responder)
}

#[tokio::test]
async fn the_reference_servers_question_inside_a_task_reaches_the_responder() {
    let peer = Peer::start(PeerKind::Everything).expect("start server-everything");
    let h = Harness::new();
    let config = discovered(&h, &peer.url(), &["simulate-research-query"]).await;
    let bound = config.get("simulate-research-query").expect("the binding");
    let args = json!({"topic": "rust", "ambiguous": true});
    let (result, responder) = with_responder(bound, args).await;
    assert!(!result.is_error, "{result:?}");
    let text = serde_json::to_string(&result.content).expect("JSON");
    assert!(
        text.contains("chosen"),
        "the answer shaped the report: {text}"
    );
    assert_eq!(
        *responder.asked.lock().expect("the log"),
        ["elicitation/create"]
    );
}

/// A 2026-era server whose task asks one question, then completes with the answer once
/// `tasks/update` brought it; the first `lost` updates get a busy answer and are dropped.
fn asking_server(lost: usize) -> (TestServer, Arc<Mutex<Option<Value>>>, Arc<AtomicBool>) {
    let dropped = std::sync::atomic::AtomicUsize::new(0);
    let answer: Arc<Mutex<Option<Value>>> = Arc::default();
    let cancelled = Arc::new(AtomicBool::new(false));
    let (seen, stop) = (answer.clone(), cancelled.clone());
    let server = hostile(Era::Stateless, move |req| {
        let id = req.id_json();
        let reply = |body: &str| Some(RawReply::result(&id, body));
        match req.method()? {
            "tools/call" => reply(
                r#"{"resultType":"task","taskId":"t-q","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlSeconds":60,"pollIntervalMilliseconds":0}"#,
            ),
            "tasks/update" if dropped.fetch_add(1, Ordering::SeqCst) < lost => {
                Some(RawReply::json(503, "busy"))
            }
            "tasks/update" => {
                let responses = req.body.pointer("/params/inputResponses/q1").cloned();
                *seen.lock().expect("the answer") = responses;
                reply(r#"{"resultType":"complete"}"#)
            }
            "tasks/cancel" => {
                stop.store(true, Ordering::SeqCst);
                reply(r#"{"resultType":"complete"}"#)
            }
            "tasks/get" => match seen.lock().expect("the answer").clone() {
                Some(answer) => reply(&format!(
                    r#"{{"resultType":"complete","taskId":"t-q","status":"completed","result":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
                    json!(answer.to_string())
                )),
                None => reply(
                    r#"{"resultType":"complete","taskId":"t-q","status":"input_required","pollIntervalMilliseconds":0,"inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"which?","requestedSchema":{"type":"object"}}}}}"#,
                ),
            },
            _ => None,
        }
    });
    (server, answer, cancelled)
}

fn spec(url: &str) -> Value {
    json!({
        "name": "asks", "description": "d", "input_schema": {"type": "object"},
        "url": url, "mcp_tool": "asks", "tenants": [TENANT], "timeout_seconds": 20,
    })
}

#[tokio::test]
async fn a_2026_tasks_question_is_answered_with_tasks_update() {
    let (server, answer, _) = asking_server(0);
    let (result, responder) = with_responder(&binding(spec(&server.url())), json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        *responder.asked.lock().expect("the log"),
        ["elicitation/create"]
    );
    let sent = answer.lock().expect("the answer").clone();
    assert_eq!(
        sent,
        Some(json!({"action": "accept", "content": {"interpretation": "chosen"}}))
    );
    assert_eq!(
        server.stats().count("tasks/update"),
        1,
        "each question answered once"
    );
}

#[tokio::test]
async fn without_a_responder_a_tasks_question_ends_the_call_and_the_task() {
    let (server, _, cancelled) = asking_server(0);
    let h = Harness::new();
    let out = call(&h, &binding(spec(&server.url())), "c-no", json!({})).await;
    assert_eq!(
        out.result["error"]["kind"], "user_input_required",
        "{}",
        out.result
    );
    assert_eq!(out.result["unknown_outcome"], true);
    h.flush().await;
    assert!(cancelled.load(Ordering::SeqCst), "the task is cancelled");
    assert_eq!(server.stats().count("tasks/update"), 0);
}

#[tokio::test]
async fn answers_the_server_did_not_take_are_sent_again_not_asked_again() {
    let (server, answer, _) = asking_server(2);
    let (result, responder) = with_responder(&binding(spec(&server.url())), json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(
        *responder.asked.lock().expect("the log"),
        ["elicitation/create"],
        "the user is asked once"
    );
    assert!(answer.lock().expect("the answer").is_some());
    assert_eq!(server.stats().count("tasks/update"), 3);
}

/// An event-stream reply carrying `messages` and then ending.
fn stream(messages: &[String]) -> RawReply {
    let body: String = messages
        .iter()
        .map(|m| format!("event: message\ndata: {m}\n\n"))
        .collect();
    RawReply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: body.into_bytes(),
    }
}

#[tokio::test]
async fn a_question_asked_again_on_a_second_read_of_the_result_is_not_asked_again() {
    // 2025-11-25: the first read of `tasks/result` asks, then its stream breaks; the
    // second asks the same again, then carries the result.
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = reads.clone();
    let server = hostile(Era::Handshake, move |req| {
        let id = req.id_json();
        let question = r#"{"jsonrpc":"2.0","id":"e-1","method":"elicitation/create","params":{"message":"which?","requestedSchema":{"type":"object"}}}"#.to_owned();
        match req.method()? {
            "tools/call" => Some(RawReply::result(
                &id,
                r#"{"task":{"taskId":"t-r","status":"working","pollInterval":0}}"#,
            )),
            "tasks/get" => Some(RawReply::result(
                &id,
                r#"{"taskId":"t-r","status":"input_required","pollInterval":0}"#,
            )),
            "tasks/result" if counted.fetch_add(1, Ordering::SeqCst) == 0 => {
                Some(stream(&[question]))
            }
            "tasks/result" => Some(stream(&[
                question,
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"read twice"}}]}}}}"#
                ),
            ])),
            _ => None,
        }
    });
    let mut form = spec(&server.url());
    form["task_support"] = json!("required");
    let (result, responder) = with_responder(&binding(form), json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    assert_eq!(
        *responder.asked.lock().expect("the log"),
        ["elicitation/create"],
        "the user is asked once"
    );
}
