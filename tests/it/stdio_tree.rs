//! A managed stdio server started through a wrapper (`sh -c`, as `npx` and `uvx` start
//! theirs) never outlives its call or its host: the whole process group ends, not only
//! the direct child.

use std::time::Duration;

use brain_mcp_bind::{ClientConfig, HostConfig, ManagedServer, ToolCall, ToolHost, ToolSpec};
use serde_json::json;

use crate::stdio_support::{alive_with, assert_failure, call_as, wait_gone};

/// Within this, every process of an ended tree is gone (the group's grace is 2 s).
const GONE_WITHIN: Duration = Duration::from_secs(8);

/// The hostile server in `era` and `mode`, started by a shell that stays its parent,
/// next to a hung grandchild of the shell's own; every command line holds `marker`.
fn wrapped(era: &str, mode: &str, marker: &str) -> ManagedServer {
    let script = brain_tests::peers::project_root().join("peers/faults/stdio_hostile.py");
    let line = format!(
        "sh -c 'sleep 300' {marker}-sleeper & python3 {} {era} {mode} --marker={marker}; wait",
        script.display()
    );
    ManagedServer::stdio(mode, "sh")
        .args(["-c".to_owned(), line, marker.to_owned()])
        .tool(ToolSpec::new("work", ["acme"]))
}

/// The processes holding `marker` once there are `count` of them (within 10 s).
async fn settled(marker: &str, count: usize) -> Vec<u32> {
    for _ in 0..200 {
        let alive = alive_with(marker);
        if alive.len() == count {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never {count} processes: {:?}", alive_with(marker));
}

fn host() -> ToolHost {
    let empty = HostConfig::from_value(&json!({"tools": []})).expect("an empty config");
    ToolHost::new(empty, ClientConfig::default()).expect("a host")
}

#[tokio::test]
async fn a_hung_wrapped_handshake_server_ends_with_its_call() {
    let marker = format!("brain-tree-call-{}", std::process::id());
    let host = host();
    host.add_server(wrapped("handshake", "stall", &marker))
        .await
        .expect("the tools load");
    // The pool's ready children: two trees of three marked processes (the shell, its
    // sleeper's shell, the server).
    let before = settled(&marker, 6).await;
    let call = ToolCall::new("acme", "s", "c1", json!({})).with_timeout(Duration::from_secs(2));
    let out = call_as(&host, "work", call).await;
    assert_failure(&out.result, "timeout", true);
    // The call took one tree; it ends whole (the pool starts another in its place).
    tokio::time::sleep(GONE_WITHIN).await;
    let after = alive_with(&marker);
    let ended: Vec<u32> = before
        .iter()
        .copied()
        .filter(|p| !after.contains(p))
        .collect();
    assert_eq!(
        ended.len(),
        3,
        "the timed-out call's whole tree ends: {before:?} -> {after:?}"
    );
    assert!(host.shutdown(Duration::from_secs(5)).await);
    assert_eq!(
        wait_gone(&marker, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "left after shutdown"
    );
}

/// A host with the wrapped 2026-era `env` server (its processes marked `marker`) that has
/// served one call of `work`.
async fn serving_one_call(marker: &str) -> ToolHost {
    let host = host();
    host.add_server(wrapped("2026", "env", marker))
        .await
        .expect("the tools load");
    let out = call_as(
        &host,
        "work",
        ToolCall::new("acme", "s", "c1", json!({"name": "HOME"})),
    )
    .await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    host
}

#[tokio::test]
async fn a_wrapped_server_never_outlives_a_dropped_host() {
    let marker = format!("brain-tree-drop-{}", std::process::id());
    let host = serving_one_call(&marker).await;
    assert!(!alive_with(&marker).is_empty());
    drop(host);
    assert_eq!(
        wait_gone(&marker, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "left after the host"
    );
}

#[tokio::test]
async fn a_removed_server_s_tree_ends_and_its_tools_go() {
    let marker = format!("brain-tree-remove-{}", std::process::id());
    let host = serving_one_call(&marker).await;
    assert_eq!(host.remove_server("env").expect("removed"), ["work"]);
    assert!(host.tools_for("acme").is_empty());
    assert_eq!(
        wait_gone(&marker, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "left after removal"
    );
    let again = host.remove_server("env").expect_err("gone already");
    assert_eq!(again.kind(), brain_mcp_bind::HostErrorKind::Invalid);
    let out = call_as(
        &host,
        "work",
        ToolCall::new("acme", "s", "c2", json!({"name": "HOME"})),
    )
    .await;
    assert_eq!(
        out.result["error"]["kind"], "tenant_not_allowed",
        "{}",
        out.result
    );
}
