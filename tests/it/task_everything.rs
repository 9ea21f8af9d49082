//! Tasks against the TypeScript reference server (2025-11-25): `simulate-research-query`
//! runs only as a task. Discovery records it, a call follows the task to its result with
//! each status message as progress, a binding that does not know says what to do, and a
//! call that runs out of time ends on time.

use brain_mcp_bind::TaskSupport;
use brain_tests::peers::{Peer, PeerKind};
use brain_tools_core::Binding;
use serde_json::{Value, json};

use crate::call_support::{Harness, assert_failure, call, discovered};

const TOOL: &str = "simulate-research-query";

/// The discovered binding, changed by `edit` (its config form).
fn edited(binding: &Binding, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Binding {
    let mut form = binding.to_value();
    edit(form.as_object_mut().expect("an object"));
    Binding::from_value(&form).expect("the edited binding loads")
}

#[tokio::test]
async fn a_task_is_followed_to_its_result_with_each_status_as_progress() {
    let peer = Peer::start(PeerKind::Everything).expect("start server-everything");
    let h = Harness::new();
    let config = discovered(&h, &peer.url(), &[TOOL]).await;
    let binding = config.get(TOOL).expect("a discovered binding").clone();
    let mcp = binding.mcp().expect("an MCP binding");
    assert_eq!(mcp.task_support(), TaskSupport::Required);
    assert_eq!(binding.to_value()["task_support"], "required");

    let out = call(&h, &binding, "c-task", json!({"topic": "rust"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let text = out.result["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("# Research Report: rust"), "{text}");
    // One event per status message, each once, counted up.
    let messages: Vec<&str> = out
        .progress
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(messages.len() >= 2, "{:?}", out.progress);
    assert!(messages.contains(&"Generating report..."), "{messages:?}");
    let mut seen = messages.clone();
    seen.dedup();
    assert_eq!(seen, messages, "a message is news once");
    let counts: Vec<u64> = out
        .progress
        .iter()
        .filter_map(|p| p["progress"].as_u64())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    h.flush().await;
}

#[tokio::test]
async fn without_task_support_the_call_says_to_run_discovery_again() {
    let peer = Peer::start(PeerKind::Everything).expect("start server-everything");
    let h = Harness::new();
    let config = discovered(&h, &peer.url(), &[TOOL]).await;
    let old = edited(config.get(TOOL).expect("the binding"), |form| {
        form.remove("task_support");
    });
    let out = call(&h, &old, "c-old", json!({"topic": "rust"})).await;
    let message = assert_failure(&out.result, "rpc_error", false);
    assert!(message.contains("run discovery"), "{message}");
    assert!(message.contains("the tool did not run"), "{message}");
    h.flush().await;
}

#[tokio::test]
async fn a_task_past_the_deadline_ends_on_time() {
    let peer = Peer::start(PeerKind::Everything).expect("start server-everything");
    let h = Harness::new();
    let config = discovered(&h, &peer.url(), &[TOOL]).await;
    let short = edited(config.get(TOOL).expect("the binding"), |form| {
        form.insert("timeout_seconds".into(), json!(1));
    });
    let started = std::time::Instant::now();
    let out = call(&h, &short, "c-short", json!({"topic": "rust"})).await;
    assert_failure(&out.result, "timeout", true);
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    // The task is cancelled and the session ended in the background.
    h.flush().await;
}
