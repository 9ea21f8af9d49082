//! Tasks against the TypeScript reference server (2025-11-25): `simulate-research-query`
//! runs only as a task. Discovery records it, a call follows the task to its result with
//! each status message as progress, a binding that does not know says what to do, and a
//! call that runs out of time ends on time.

use std::time::Duration;

use brain_mcp_bind::{
    CancellationToken, ClientConfig, ErrorKind, HostConfig, ManagedServer, TaskSupport, ToolCall,
    ToolEvent, ToolHost, ToolSpec,
};
use brain_tests::peers::{Peer, PeerKind};
use brain_tools_core::Binding;
use serde_json::{Value, json};

use crate::call_support::{Harness, TENANT, assert_failure, call as run, discovered};
use crate::stdio_support::call;

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

    let out = run(&h, &binding, "c-task", json!({"topic": "rust"})).await;
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
    let out = run(&h, &old, "c-old", json!({"topic": "rust"})).await;
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
    let out = run(&h, &short, "c-short", json!({"topic": "rust"})).await;
    assert_failure(&out.result, "timeout", true);
    assert!(started.elapsed() < Duration::from_secs(3));
    // The task is cancelled and the session ended in the background.
    h.flush().await;
}

#[tokio::test]
async fn the_host_runs_a_managed_servers_task_tool_and_shutdown_ends_a_running_one() {
    let peer = Peer::start(PeerKind::Everything).expect("start server-everything");
    let config = HostConfig::load(r#"{"tools": []}"#).expect("an empty config");
    let host = ToolHost::new(config, ClientConfig::default()).expect("a host");
    let server = ManagedServer::http("everything", peer.url())
        .tool(ToolSpec::new(TOOL, [TENANT]).timeout(Duration::from_secs(60)));
    let names = host.add_server(server).await.expect("adds");
    let name = names.first().expect("the tool").clone();
    let out = call(&host, &name, "h-1", json!({"topic": "rust"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert!(!out.progress.is_empty(), "status messages as progress");
    // A task cancelled by its caller while it runs (what SIGTERM does in the programs):
    // the call ends as cancelled at once, and the host's cleanup (tasks/cancel, the
    // session's DELETE) finishes before shutdown returns.
    let cancel = CancellationToken::new();
    let call = ToolCall::new(TENANT, "s", "h-2", json!({"topic": "go"}));
    let mut running = host.call_with(&name, call, cancel.clone());
    let first = running.next().await.expect("a first event");
    assert!(matches!(first, ToolEvent::Progress(_)), "{first:?}");
    cancel.cancel();
    let mut last = None;
    while let Some(event) = running.next().await {
        last = Some(event);
    }
    match last {
        Some(ToolEvent::Result(result)) => {
            assert_eq!(
                result.error_kind(),
                Some(ErrorKind::Cancelled),
                "{result:?}"
            );
            assert_eq!(result.unknown_outcome, Some(true));
        }
        other => panic!("the call ends with a result: {other:?}"),
    }
    assert!(
        host.shutdown(Duration::from_secs(10)).await,
        "cleanup finished"
    );
}
