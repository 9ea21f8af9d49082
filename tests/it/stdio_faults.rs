//! Managed stdio servers that misbehave (`peers/faults/stdio_fault.py`): every call ends
//! by its outcome or its timeout, memory stays bounded whatever a child writes, and no
//! child outlives the host.

use std::time::{Duration, Instant};

use brain_mcp_bind::{ManagedServer, ToolCall, ToolHost, ToolSpec};
use brain_tests::peers::Peer;
use serde_json::json;

use crate::stdio_support::{TENANT, assert_failure, call, call_as, host, wait_gone};

/// How long any child may take to be gone after its host.
const GONE_WITHIN: Duration = Duration::from_secs(10);

fn fault(mode: &str, marker: &str) -> ManagedServer {
    let cmd = Peer::fault_stdio_command(mode, marker);
    ManagedServer::stdio(mode, &cmd.program)
        .args(&cmd.args)
        .tool(ToolSpec::new("work", [TENANT]).max_output_bytes(64 * 1024))
}

fn marker(test: &str) -> String {
    format!("brain-fault-{test}-{}", std::process::id())
}

async fn added(server: ManagedServer) -> ToolHost {
    let host = host();
    host.add_server(server)
        .await
        .expect("the fault server's tools load");
    host
}

/// A call limited to `seconds` by its own deadline.
fn within(call_id: &str, seconds: u64) -> ToolCall {
    ToolCall::new(TENANT, "s", call_id, json!({})).with_timeout(Duration::from_secs(seconds))
}

#[tokio::test]
async fn a_child_that_dies_mid_call_fails_it_as_connection_lost_and_is_restarted() {
    let m = marker("exit");
    let host = added(fault("exit", &m)).await;
    let out = call(&host, "work", "c-1", json!({})).await;
    let message = assert_failure(&out.result, "connection_lost", true);
    assert!(message.contains("exit status: 3"), "{message}");
    // The next call gets a new child (after the backoff) and meets the same end.
    let out = call(&host, "work", "c-2", json!({})).await;
    assert_failure(&out.result, "connection_lost", true);
    let status = host.server_status("exit").expect("status");
    assert!(status.crashes >= 2, "{status:?}");
    assert!(
        status
            .stderr
            .contains("fault: exiting in the middle of a call"),
        "{status:?}"
    );
    drop(host);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

#[tokio::test]
async fn endless_garbage_on_stdout_ends_with_the_call_s_timeout() {
    let m = marker("garbage");
    let host = added(fault("garbage", &m)).await;
    let start = Instant::now();
    let out = call_as(&host, "work", within("c-1", 2)).await;
    assert_failure(&out.result, "timeout", true);
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );
    assert!(host.shutdown(Duration::from_secs(10)).await);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

#[tokio::test]
async fn a_100_mb_line_fails_the_call_without_holding_it() {
    let m = marker("huge");
    let host = added(fault("huge", &m)).await;
    // (How much memory that takes is measured in a process of its own, where other tests
    // cannot add to it: host_examples.rs.)
    let out = call(&host, "work", "c-1", json!({})).await;
    let message = assert_failure(&out.result, "output_too_large", true);
    assert!(message.contains("longer than"), "{message}");
    drop(host);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

#[tokio::test]
async fn a_stderr_flood_neither_blocks_the_child_nor_grows_memory() {
    let m = marker("stderr");
    let server = fault("stderr", &m).stderr_limit(4096);
    let host = added(server).await;
    let out = call(&host, "work", "c-1", json!({})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.result["content"][0]["text"], "worked");
    // The call's child is closed in the background; its stderr is kept once it ends (a
    // wait bounded generously: the whole suite shares two cores).
    let mut status = host.server_status("stderr").expect("status");
    for _ in 0..400 {
        if status.stderr.contains("fault: the last stderr line") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = host.server_status("stderr").expect("status");
    }
    assert!(status.stderr.len() <= 4096, "{}", status.stderr.len());
    assert!(
        status.stderr.contains("fault: the last stderr line"),
        "{status:?}"
    );
    assert!(host.shutdown(Duration::from_secs(10)).await);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

#[tokio::test]
async fn a_child_that_never_answers_initialize_ends_by_the_timeout_unsent() {
    let m = marker("silent");
    let state = std::env::temp_dir().join(format!("{m}.state"));
    let _ = std::fs::remove_file(&state);
    // Known era (no probe) and no pool: the discovery's child is the first, and the
    // call's own child is the next, which never answers.
    let server = fault("silent-init", &m)
        .env("FAULT_STATE", &state)
        .era(brain_mcp_bind::Era::Handshake)
        .pool_size(0);
    let host = added(server).await;
    let start = Instant::now();
    let out = call_as(&host, "work", within("c-1", 2)).await;
    // The call never reached the tool: nothing was sent, so the outcome is known.
    assert_failure(&out.result, "timeout", false);
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );
    drop(host);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
    let _ = std::fs::remove_file(&state);
}

#[tokio::test]
async fn a_call_that_hangs_ends_by_its_timeout_or_its_cancel() {
    let m = marker("hang");
    let host = added(fault("hang", &m).pool_size(0)).await;
    let out = call_as(&host, "work", within("c-1", 1)).await;
    assert_failure(&out.result, "timeout", true);

    // Dropping the handle cancels the call; its child is closed in the background.
    let handle = host.call("work", ToolCall::new(TENANT, "s", "c-2", json!({})));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let token = handle.cancel_token();
    drop(handle);
    assert!(token.is_cancelled());
    // The child was told (notifications/cancelled for the call's request) before it
    // was closed; its stderr says what it got.
    let mut stderr = String::new();
    for _ in 0..100 {
        stderr = host.server_status("hang").expect("status").stderr;
        if stderr.contains("got notifications/cancelled") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        stderr.contains("fault: got tools/call\nfault: got notifications/cancelled"),
        "{stderr}"
    );
    assert!(host.shutdown(Duration::from_secs(10)).await);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

#[tokio::test]
async fn children_still_starting_end_with_a_failed_add_and_with_the_host() {
    let m = marker("never");
    let state = std::env::temp_dir().join(format!("{m}.state"));
    std::fs::write(&state, b"").expect("the state file");
    // Every child is silent: the add fails by its deadline while the pool keeps starting.
    let server = fault("silent-init", &m)
        .env("FAULT_STATE", &state)
        .era(brain_mcp_bind::Era::Handshake)
        .discovery_timeout(Duration::from_secs(2));
    let host = host();
    let err = host
        .add_server(server)
        .await
        .expect_err("nothing answers initialize");
    assert!(err.to_string().contains("initialize"), "{err}");
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );

    // A shared 2026 child killed from outside is restarted, and calls go on.
    let py = Peer::python_stdio_command().expect("the Python SDK peer");
    let m = marker("restart");
    let server = ManagedServer::stdio("restart", &py.program)
        .args(&py.args)
        .arg_marker(&m)
        .tool(ToolSpec::new("echo", [TENANT]));
    host.add_server(server).await.expect("loads");
    let out = call(&host, "echo", "c-1", json!({"text": "one"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let pids = crate::stdio_support::alive_with(&m);
    assert_eq!(pids.len(), 1, "one shared child: {pids:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pids[0].to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let mut restarted = None;
    for _ in 0..200 {
        let now = crate::stdio_support::alive_with(&m);
        if now.len() == 1 && now[0] != pids[0] {
            restarted = Some(now[0]);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        restarted.is_some(),
        "the shared child was restarted in the background"
    );
    let out = call(&host, "echo", "c-2", json!({"text": "two"})).await;
    assert_eq!(out.result["content"][0]["text"], "two", "{}", out.result);
    assert_eq!(host.server_status("restart").expect("status").crashes, 1);
    drop(host);
    assert_eq!(
        wait_gone(&m, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
    let _ = std::fs::remove_file(&state);
}

/// Puts a marker on a managed command's line, for finding its processes.
trait ArgMarker {
    fn arg_marker(self, marker: &str) -> Self;
}

impl ArgMarker for ManagedServer {
    fn arg_marker(self, marker: &str) -> Self {
        self.args([format!("--marker={marker}")])
    }
}
