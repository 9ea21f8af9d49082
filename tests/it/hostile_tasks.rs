//! A hostile server's tasks (2025-11-25): every odd answer ends the call on time, with
//! the right kind, `unknown_outcome` true once the task exists, bounded work, no secret
//! shown, the `tools/call` sent once, and the task cancelled when the call ends first.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use brain_tests::server::{Era, RawReply, Seen, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, Outcome, TENANT, binding, call_with};
use crate::hostile_support::{TOKEN, assert_no_token, hostile, kind, printed};

const TASK: &str = r#"{"task":{"taskId":"t-1","status":"working","pollInterval":0}}"#;

/// A server that answers `tools/call` with a task, the n-th `tasks/get` (from 0) with
/// `get(n)`, and `tasks/result` with `fetched()`.
fn task_server(
    get: impl Fn(usize, &Seen<'_>) -> RawReply + Send + Sync + 'static,
    fetched: impl Fn(&Seen<'_>) -> RawReply + Send + Sync + 'static,
) -> TestServer {
    TestServer::start(task_config(Era::Handshake, get, fetched))
}

/// [`task_server`]'s configuration in `era` (a 2026 task answers with `resultType`).
fn task_config(
    era: Era,
    get: impl Fn(usize, &Seen<'_>) -> RawReply + Send + Sync + 'static,
    fetched: impl Fn(&Seen<'_>) -> RawReply + Send + Sync + 'static,
) -> ServerConfig {
    let polls = Arc::new(AtomicUsize::new(0));
    let created = match era {
        Era::Stateless => {
            r#"{"resultType":"task","taskId":"t-1","status":"working","pollIntervalMilliseconds":0}"#
        }
        _ => TASK,
    };
    ServerConfig::new(era).hook(move |seen| match seen.method()? {
        "tools/call" => Some(RawReply::result(&seen.id_json(), created)),
        "tasks/get" => Some(get(polls.fetch_add(1, Ordering::SeqCst), seen)),
        "tasks/result" => Some(fetched(seen)),
        "tasks/cancel" => Some(RawReply::result(
            &seen.id_json(),
            r#"{"taskId":"t-1","status":"cancelled"}"#,
        )),
        _ => None,
    })
}

fn status(seen: &Seen<'_>, status: &str, extra: &str) -> RawReply {
    RawReply::result(
        &seen.id_json(),
        &format!(r#"{{"taskId":"t-1","status":"{status}","pollInterval":0{extra}}}"#),
    )
}

fn done(seen: &Seen<'_>) -> RawReply {
    RawReply::result(
        &seen.id_json(),
        r#"{"content":[{"type":"text","text":"done"}]}"#,
    )
}

/// One call of a task tool on `server`, with `timeout` seconds and `limit` output bytes.
async fn run(server: &TestServer, timeout: u64, limit: u64) -> Outcome {
    run_as(server, timeout, limit, true).await
}

/// [`run`], the binding saying the tool runs as a task only when `task`.
async fn run_as(server: &TestServer, timeout: u64, limit: u64, task: bool) -> Outcome {
    let h = Harness::new();
    let mut spec = json!({
        "name": "long", "description": "d", "input_schema": {"type": "object"},
        "url": server.url(), "mcp_tool": "long", "token_env": "HOSTILE_TOKEN",
        "tenants": [TENANT], "timeout_seconds": timeout, "max_output_bytes": limit,
    });
    if task {
        spec["task_support"] = json!("required");
    }
    let call = Call {
        token: Some(TOKEN.to_owned()),
        ..Call::new("t-call", json!({}))
    };
    let out = call_with(&h, &binding(spec), call).await;
    h.flush().await;
    out
}

fn unknown(out: &Outcome) -> bool {
    out.result["unknown_outcome"] == Value::Bool(true)
}

#[tokio::test]
async fn a_task_that_never_ends_polled_at_interval_zero_ends_at_the_deadline_cancelled() {
    let server = task_server(|_, seen| status(seen, "working", ""), done);
    let started = Instant::now();
    let out = run(&server, 2, 65_536).await;
    assert_eq!(kind(&out), "timeout", "{}", out.result);
    assert!(unknown(&out));
    assert!(started.elapsed() < Duration::from_secs(5));
    let (stats, cancelled) =
        server.wait_until(Duration::from_secs(3), |s| s.count("tasks/cancel") == 1);
    assert!(cancelled, "{:?}", stats.methods());
    // The floor holds: 2 s at 250 ms at most, give or take the first and the last.
    assert!(
        stats.count("tasks/get") <= 10,
        "{}",
        stats.count("tasks/get")
    );
    assert_eq!(stats.count("tools/call"), 1);
    let cancel = stats
        .with_method("tasks/cancel")
        .next()
        .expect("the cancel");
    assert_eq!(cancel.body["params"]["taskId"], "t-1");
}

#[tokio::test]
async fn polls_go_on_past_busy_answers_and_the_result_arrives() {
    let server = task_server(
        |n, seen| match n {
            0 | 1 => RawReply::json(503, "busy"),
            _ => status(seen, "completed", ""),
        },
        done,
    );
    let out = run(&server, 20, 65_536).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.result["content"][0]["text"], "done");
    let stats = server.stats();
    assert_eq!(stats.count("tools/call"), 1, "{:?}", stats.methods());
    assert_eq!(stats.count("tasks/get"), 3);
    assert_eq!(stats.count("tasks/result"), 1);
    assert_eq!(
        stats.count("tasks/cancel"),
        0,
        "a finished task is not cancelled"
    );
}

#[tokio::test]
async fn a_result_over_the_limit_is_too_large_and_fetched_once() {
    let big = "x".repeat(300_000);
    let server = task_server(
        |_, seen| status(seen, "completed", ""),
        move |seen| {
            let text = format!(r#"{{"content":[{{"type":"text","text":"{big}"}}]}}"#);
            RawReply::result(&seen.id_json(), &text)
        },
    );
    let out = run(&server, 20, 1_000).await;
    assert_eq!(kind(&out), "output_too_large", "{}", out.result);
    assert!(unknown(&out));
    assert_eq!(server.stats().count("tasks/result"), 1);
}

#[tokio::test]
async fn a_task_that_vanishes_or_turns_into_another_ends_the_call_and_is_cancelled() {
    let gone = task_server(
        |_, seen| RawReply::rpc_error(200, &seen.id_json(), -32602, "Task not found", None),
        done,
    );
    let out = run(&gone, 20, 65_536).await;
    assert_eq!(kind(&out), "rpc_error", "{}", out.result);
    assert!(unknown(&out));
    let other = task_server(
        |_, seen| RawReply::result(&seen.id_json(), r#"{"taskId":"t-2","status":"completed"}"#),
        done,
    );
    let out = run(&other, 20, 65_536).await;
    assert_eq!(kind(&out), "protocol_error", "{}", out.result);
    assert!(unknown(&out));
    let (_, cancelled) = other.wait_until(Duration::from_secs(3), |s| s.count("tasks/cancel") == 1);
    assert!(cancelled, "a task still running is cancelled");
}

#[tokio::test]
async fn a_refused_poll_still_says_the_tool_may_have_run() {
    let server = task_server(|_, _| RawReply::json(401, "no"), done);
    let out = run(&server, 20, 65_536).await;
    assert!(unknown(&out), "{}", out.result);
    let message = out.result["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.contains("did not run"), "{message}");
}

#[tokio::test]
async fn status_messages_are_progress_once_bounded_and_without_the_token() {
    let server = task_server(
        |n, seen| {
            let message = format!("step {} with {TOKEN} {}", n.min(2), "y".repeat(5_000));
            let state = if n < 4 { "working" } else { "completed" };
            status(
                seen,
                state,
                &format!(r#","statusMessage":{}"#, json!(message)),
            )
        },
        done,
    );
    let out = run(&server, 20, 65_536).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_no_token(TOKEN, &printed(&out), "task progress");
    let messages: Vec<&str> = out
        .progress
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    // Steps 0, 1 and 2 (repeated until done): each once.
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages.iter().all(|m| m.len() <= 1_100), "bounded");
}

/// A 2026-era server that makes every call a task (SEP-2663) once the call declares the
/// extension: each `tasks/get` must name the task in `Mcp-Name` and echo the last
/// `requestState`; the third poll finds it completed, or never when `ends` is false.
fn server_2026(ends: bool) -> TestServer {
    let polls = Arc::new(AtomicUsize::new(0));
    hostile(Era::Stateless, move |seen| {
        let id = seen.id_json();
        match seen.method()? {
            "tools/call" => {
                let declared = seen
                    .body
                    .pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions/io.modelcontextprotocol~1tasks")
                    .is_some();
                Some(if declared {
                    RawReply::result(
                        &id,
                        r#"{"resultType":"task","taskId":"t-9","status":"working","createdAt":"2026-12-05T00:00:00Z","lastUpdatedAt":"2026-12-05T00:00:00Z","ttlSeconds":60,"pollIntervalMilliseconds":0,"requestState":"s-0"}"#,
                    )
                } else {
                    RawReply::rpc_error(200, &id, -32021, "tasks needed", None)
                })
            }
            "tasks/get" => {
                let n = polls.fetch_add(1, Ordering::SeqCst);
                let routed = seen.headers.get("mcp-name").and_then(|v| v.to_str().ok());
                let state = seen.body.pointer("/params/requestState");
                if routed != Some("t-9") || state != Some(&json!(format!("s-{n}"))) {
                    return Some(RawReply::rpc_error(200, &id, -32602, "lost the task", None));
                }
                let next = format!(r#""requestState":"s-{}""#, n + 1);
                let body = if ends && n == 2 {
                    format!(
                        r#"{{"resultType":"complete","taskId":"t-9","status":"completed",{next},"result":{{"content":[{{"type":"text","text":"done"}}]}}}}"#
                    )
                } else {
                    format!(
                        r#"{{"resultType":"complete","taskId":"t-9","status":"working","pollIntervalMilliseconds":0,"statusMessage":"poll {n}",{next}}}"#
                    )
                };
                Some(RawReply::result(&id, &body))
            }
            "tasks/cancel" => Some(RawReply::result(&id, r#"{"resultType":"complete"}"#)),
            _ => None,
        }
    })
}

#[tokio::test]
async fn a_2026_task_is_followed_with_its_routing_header_and_state() {
    let server = server_2026(true);
    let out = run(&server, 20, 65_536).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.result["content"][0]["text"], "done");
    let stats = server.stats();
    assert_eq!(stats.count("tools/call"), 1);
    assert_eq!(stats.count("tasks/get"), 3, "{:?}", stats.methods());
    assert_eq!(stats.count("tasks/cancel"), 0);
    assert_eq!(out.progress.len(), 2, "{:?}", out.progress);
}

#[tokio::test]
async fn a_2026_task_past_the_deadline_is_cancelled_by_name() {
    let server = server_2026(false);
    let out = run(&server, 1, 65_536).await;
    assert_eq!(kind(&out), "timeout", "{}", out.result);
    assert!(unknown(&out));
    let (stats, cancelled) =
        server.wait_until(Duration::from_secs(3), |s| s.count("tasks/cancel") == 1);
    assert!(cancelled, "{:?}", stats.methods());
    let cancel = stats
        .with_method("tasks/cancel")
        .next()
        .expect("the cancel");
    assert_eq!(cancel.header("mcp-name"), Some("t-9"));
    assert_eq!(cancel.body["params"]["taskId"], "t-9");
    // The cancel echoes the state of the latest status read, not the creation's: the
    // last poll may still have been on its way when the deadline came.
    let polls = stats.count("tasks/get");
    assert!(polls >= 2, "{polls}");
    let state = cancel.body["params"]["requestState"].as_str().unwrap_or("");
    assert!(
        [format!("s-{polls}"), format!("s-{}", polls - 1)].contains(&state.to_owned()),
        "{state} after {polls} polls"
    );
}

/// A reply whose stream ends before its answer: the connection was lost.
fn broken() -> RawReply {
    RawReply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n".to_vec(),
    }
}

#[tokio::test]
async fn polls_whose_connection_breaks_are_sent_again_and_the_result_arrives() {
    for era in [Era::Handshake, Era::Stateless] {
        let completed = move |seen: &Seen<'_>| {
            let result = r#","result":{"content":[{"type":"text","text":"done"}]}"#;
            status(
                seen,
                "completed",
                if era == Era::Stateless { result } else { "" },
            )
        };
        let config = task_config(
            era,
            move |n, seen| if n < 2 { broken() } else { completed(seen) },
            done,
        );
        let server = TestServer::start(config);
        let out = run(&server, 20, 65_536).await;
        assert_eq!(out.result["is_error"], false, "{era:?}: {}", out.result);
        assert_eq!(out.result["content"][0]["text"], "done");
        let stats = server.stats();
        assert_eq!(stats.count("tools/call"), 1, "{era:?}");
        assert_eq!(stats.count("tasks/get"), 3, "{era:?}");
    }
}

#[tokio::test]
async fn a_poll_interval_of_hours_still_ends_at_the_deadline() {
    let slow = task_server(
        |_, seen| {
            RawReply::result(
                &seen.id_json(),
                r#"{"taskId":"t-1","status":"working","pollInterval":3600000}"#,
            )
        },
        done,
    );
    let started = Instant::now();
    let out = run(&slow, 2, 65_536).await;
    assert_eq!(kind(&out), "timeout", "{}", out.result);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_task_the_binding_did_not_ask_for_is_a_protocol_error() {
    let server = task_server(|_, seen| status(seen, "completed", ""), done);
    let out = run_as(&server, 20, 65_536, false).await;
    assert_eq!(kind(&out), "protocol_error", "{}", out.result);
    assert!(unknown(&out));
    assert_eq!(server.stats().count("tasks/get"), 0, "not followed");
}

#[tokio::test]
async fn a_server_that_never_answers_tasks_cancel_holds_nothing_up() {
    let mut config = task_config(Era::Handshake, |_, seen| status(seen, "working", ""), done);
    config.stall_method = Some("tasks/cancel");
    let server = TestServer::start(config);
    let started = Instant::now();
    // `run` waits for the client's background cleanup, which the cancel is part of.
    let out = run(&server, 1, 65_536).await;
    assert_eq!(kind(&out), "timeout", "{}", out.result);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.stats().count("tasks/cancel"), 1);
}

#[tokio::test]
async fn a_task_whose_result_mentions_task_augmentation_is_the_tools_own_answer() {
    // A 2026 call becomes a task without the binding asking; its error result is the
    // tool's, even in the words of a server that wanted a task: the tool ran.
    let config = task_config(
        Era::Stateless,
        |_, seen| {
            status(
                seen,
                "completed",
                r#","result":{"content":[{"type":"text","text":"requires task augmentation"}],"isError":true}"#,
            )
        },
        done,
    );
    let server = TestServer::start(config);
    let out = run_as(&server, 20, 65_536, false).await;
    assert_eq!(out.result["is_error"], true, "{}", out.result);
    assert_eq!(kind(&out), "(none)", "{}", out.result);
    assert_eq!(
        out.result["content"][0]["text"], "requires task augmentation",
        "{}",
        out.result
    );
}

#[tokio::test]
async fn a_2026_task_created_already_done_is_polled_once_for_its_result() {
    let polls = Arc::new(AtomicUsize::new(0));
    let counted = polls.clone();
    let server = hostile(Era::Stateless, move |seen| {
        let id = seen.id_json();
        match seen.method()? {
            "tools/call" => Some(RawReply::result(
                &id,
                r#"{"resultType":"task","taskId":"t-d","status":"completed"}"#,
            )),
            "tasks/get" => {
                counted.fetch_add(1, Ordering::SeqCst);
                Some(RawReply::result(
                    &id,
                    r#"{"resultType":"complete","taskId":"t-d","status":"completed","result":{"content":[{"type":"text","text":"early"}]}}"#,
                ))
            }
            _ => None,
        }
    });
    let out = run(&server, 20, 65_536).await;
    assert_eq!(out.result["content"][0]["text"], "early", "{}", out.result);
    assert_eq!(polls.load(Ordering::SeqCst), 1);
    let stats = server.stats();
    assert_eq!(stats.count("tasks/result"), 0, "no such request in 2026");
    assert_eq!(stats.count("tasks/cancel"), 0);
}

#[tokio::test]
async fn a_token_where_a_status_message_is_cut_shows_no_part_of_it() {
    // Cut first, the token's head would survive without matching the token.
    let server = task_server(
        |n, seen| {
            let message = format!("{}{TOKEN}", "y".repeat(500));
            let state = if n < 1 { "working" } else { "completed" };
            status(
                seen,
                state,
                &format!(r#","statusMessage":{}"#, json!(message)),
            )
        },
        done,
    );
    let out = run(&server, 20, 65_536).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.progress.len(), 1, "{:?}", out.progress);
    let shown = printed(&out);
    assert!(!shown.contains(&TOKEN[..8]), "part of the token: {shown}");
}
