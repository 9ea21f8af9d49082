//! Red team 2: managed stdio servers that attack the host (`peers/faults/stdio_hostile.py`).
//! Each test names the promise it holds the host to; the ignored ones show a weakness that
//! is still open, with the reason.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use brain_mcp_bind::{
    ClientConfig, HostConfig, ManagedServer, Refusal, Responder, ServerRequest, ToolCall, ToolHost,
    ToolSpec,
};
use serde_json::{Value, json};

use crate::stdio_support::{Outcome, assert_failure, call_as, wait_gone};

const ACME: &str = "acme";
const GLOBEX: &str = "globex";
const GONE_WITHIN: Duration = Duration::from_secs(10);

fn marker(test: &str) -> String {
    format!("brain-redteam2-{test}-{}", std::process::id())
}

/// The hostile server speaking `era` (`2026` or `handshake`) and misbehaving as `mode`,
/// its tools `work`, `trap` and `big` open to both tenants.
fn hostile(era: &str, mode: &str, marker: &str) -> ManagedServer {
    let script = brain_tests::peers::project_root().join("peers/faults/stdio_hostile.py");
    ManagedServer::stdio(mode, "python3")
        .args([
            script.display().to_string(),
            era.to_owned(),
            mode.to_owned(),
            format!("--marker={marker}"),
        ])
        .tool(ToolSpec::new("work", [ACME, GLOBEX]).max_output_bytes(4096))
        .tool(ToolSpec::new("trap", [ACME, GLOBEX]))
        .tool(ToolSpec::new("big", [ACME, GLOBEX]).max_output_bytes(4096))
}

fn empty_config() -> HostConfig {
    HostConfig::from_value(&json!({"tools": []})).expect("an empty config")
}

async fn added(server: ManagedServer) -> ToolHost {
    let host = ToolHost::new(empty_config(), ClientConfig::default()).expect("a host");
    host.add_server(server).await.expect("the tools load");
    host
}

fn call(tenant: &str, call_id: &str, args: Value, seconds: u64) -> ToolCall {
    ToolCall::new(tenant, "s", call_id, args).with_timeout(Duration::from_secs(seconds))
}

fn progress_messages(out: &Outcome) -> Vec<String> {
    out.progress
        .iter()
        .filter_map(|p| p["message"].as_str().map(str::to_owned))
        .collect()
}

async fn gone(host: ToolHost, marker: &str) {
    drop(host);
    assert_eq!(
        wait_gone(marker, GONE_WITHIN).await,
        Vec::<u32>::new(),
        "children left"
    );
}

/// Promise 5: calls of different tenants are never mixed up on a shared child. Two
/// tenants' calls with the same `call_id` (model providers number tool calls `call_0`,
/// `call_1`... per conversation) reach one 2026-era child; each must see only its own
/// progress.
#[tokio::test]
async fn tenants_sharing_a_call_id_never_see_each_other_s_progress() {
    let m = marker("pair");
    let host = added(hostile("2026", "pair", &m)).await;
    let a = call_as(
        &host,
        "work",
        call(ACME, "call_0", json!({"secret": "acme-private"}), 10),
    );
    let b = call_as(
        &host,
        "work",
        call(GLOBEX, "call_0", json!({"secret": "globex-private"}), 10),
    );
    let (a, b) = tokio::join!(a, b);
    for (out, own, other) in [
        (&a, "acme-private", "globex-private"),
        (&b, "globex-private", "acme-private"),
    ] {
        assert_eq!(out.result["is_error"], false, "{}", out.result);
        assert_eq!(out.result["content"][0]["text"], own, "{}", out.result);
        let seen = progress_messages(out);
        assert!(
            !seen.iter().any(|m| m.contains(other)),
            "a call of one tenant saw another tenant's progress: {seen:?}"
        );
        assert_eq!(seen, vec![own.to_owned()], "its own progress");
    }
    gone(host, &m).await;
}

/// Promise 3: progress does not spend the result budget (a tool may report progress for
/// hours), over stdio as over HTTP. 1,000 notifications of 200 characters before a small
/// result, on a tool whose budget is 2 x 4096 + 64 KiB.
#[tokio::test]
async fn progress_does_not_spend_a_stdio_call_s_result_budget() {
    for era in ["2026", "handshake"] {
        let m = marker(&format!("progress-{era}"));
        let host = added(hostile(era, "progress", &m).pool_size(1)).await;
        let out = call_as(
            &host,
            "work",
            call(ACME, "c-1", json!({"count": 1000, "pad": 200}), 20),
        )
        .await;
        assert_eq!(out.result["is_error"], false, "{era}: {}", out.result);
        assert_eq!(out.result["content"][0]["text"], "worked", "{era}");
        // One message is still capped, as over HTTP (256 KiB).
        let out = call_as(
            &host,
            "work",
            call(ACME, "c-2", json!({"count": 1, "pad": 300_000}), 20),
        )
        .await;
        assert_failure(&out.result, "output_too_large", true);
        gone(host, &m).await;
    }
}

/// Promises 2 and 5: no task or memory grows per message. A 2026-era child that writes
/// `ping` requests without end and never reads its stdin must not make the host hold one
/// task (and one answer) per ping.
#[tokio::test]
async fn a_ping_flood_that_never_reads_its_answers_does_not_grow_tasks() {
    let m = marker("pings");
    let host = added(hostile("2026", "pings", &m)).await;
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let started = Instant::now();
    let mut handle = host.call("work", call(ACME, "c-1", json!({}), 2));
    let mut most = 0;
    let result = loop {
        tokio::select! {
            event = handle.next() => match event {
                Some(brain_mcp_bind::ToolEvent::Result(r)) => break r,
                Some(_) => {}
                None => panic!("no result"),
            },
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                most = most.max(metrics.num_alive_tasks());
            }
        }
    };
    let result = serde_json::to_value(&result).expect("JSON");
    assert_failure(&result, "timeout", true);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    // The child goes on flooding after the call: nothing may pile up then either.
    tokio::time::sleep(Duration::from_secs(1)).await;
    most = most.max(metrics.num_alive_tasks());
    assert!(
        most < before + 200,
        "tasks grew from {before} to {most} while the child flooded pings"
    );
    gone(host, &m).await;
}

/// Promise 5, one tenant's call must not fail another's: a result line over the child's
/// line limit (a legitimate tool asked for too much) fails every call waiting on the
/// shared child, whoever's line it was.
#[tokio::test]
#[ignore = "redteam2: an over-long line on a shared 2026 child fails every call on it (the line's id is not known); needs id capture while skipping"]
async fn one_tenant_s_oversized_result_does_not_fail_another_tenant_s_call() {
    let m = marker("big");
    let host = added(hostile("2026", "big", &m)).await;
    let other = call_as(&host, "work", call(GLOBEX, "g-1", json!({}), 10));
    let big = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call_as(&host, "big", call(ACME, "a-1", json!({}), 10)).await
    };
    let (other, big) = tokio::join!(other, big);
    assert_failure(&big.result, "output_too_large", true);
    assert_eq!(other.result["is_error"], false, "{}", other.result);
    gone(host, &m).await;
}

/// Promise 1 and health: a child that exits mid-call while a process it started still
/// holds its stdout. The call should fail as `connection_lost` at once, and the next call
/// get a new child; instead every call on the 2026-era child runs to its deadline, for as
/// long as the grandchild lives (here 30 s).
#[tokio::test]
#[ignore = "redteam2: a child's exit is seen only as the end of its stdout; a grandchild holding it keeps a dead shared child in service"]
async fn a_child_that_exits_leaving_its_stdout_open_fails_the_call_at_once() {
    let m = marker("orphan");
    let host = added(hostile("2026", "orphan", &m)).await;
    let started = Instant::now();
    let out = call_as(&host, "work", call(ACME, "c-1", json!({}), 8)).await;
    let took = started.elapsed();
    let kind = out.result["error"]["kind"].clone();
    drop(host);
    // The grandchild is ours to end (the host never knew it).
    for pid in crate::stdio_support::alive_with(&m) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert_eq!(kind, "connection_lost", "{}", out.result);
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// Answers every form at once.
struct Accept;

#[async_trait]
impl Responder for Accept {
    async fn answer(&self, _request: &ServerRequest<'_>) -> Result<Value, Refusal> {
        Ok(json!({"action": "accept", "content": {}}))
    }
}

/// Promise 5, the implementer's suspected weakness (confirmed, then fixed): when a call's
/// queue of 32 messages was full while it waited to write to the shared child's full
/// stdin, the child's reader waited for that call, so another call's answer (written after
/// 1 s) was not read until the stalled call's deadline: the other call timed out at 3 s.
/// It takes a child that does not read its stdin (a hostile or stuck one).
#[tokio::test]
async fn a_call_stalled_on_a_full_pipe_does_not_hold_another_call_s_answer() {
    let m = marker("stall");
    let host = ToolHost::with_responder(empty_config(), ClientConfig::default(), Arc::new(Accept))
        .expect("a host");
    host.add_server(hostile("2026", "stall", &m))
        .await
        .expect("the tools load");
    let other = call_as(&host, "work", call(GLOBEX, "g-1", json!({}), 3));
    let trap = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call_as(&host, "trap", call(ACME, "a-1", json!({}), 8)).await
    };
    let (other, _trap) = tokio::join!(other, trap);
    assert_eq!(other.result["is_error"], false, "{}", other.result);
    gone(host, &m).await;
}

/// `ManagedServer::discovery_timeout` bounds starting the server and reading its tools,
/// also when the child never answers the era probe (whose own patience is 10 s).
#[tokio::test]
async fn adding_a_mute_server_ends_by_its_discovery_timeout() {
    let m = marker("mute");
    let host = ToolHost::new(empty_config(), ClientConfig::default()).expect("a host");
    let started = Instant::now();
    let added = host
        .add_server(hostile("handshake", "mute", &m).discovery_timeout(Duration::from_secs(1)))
        .await;
    let took = started.elapsed();
    assert!(added.is_err(), "a mute server cannot be added");
    assert!(took < Duration::from_secs(3), "add_server took {took:?}");
    gone(host, &m).await;
}

/// `shutdown(within)` returns within about `within`, however many children ignore the
/// end of their stdin.
#[tokio::test]
async fn shutdown_keeps_its_bound_with_children_that_ignore_the_end_of_stdin() {
    let m = marker("noexit");
    let host = added(hostile("handshake", "noexit", &m).pool_size(4)).await;
    // Let the pool fill: four ready children.
    let until = Instant::now() + Duration::from_secs(10);
    while crate::stdio_support::alive_with(&m).len() < 4 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    host.shutdown(Duration::from_secs(1)).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(2500),
        "shutdown(1 s) took {took:?}"
    );
    gone(host, &m).await;
}

/// Promise 6: a token goes to its server's origin and nowhere else. A managed stdio
/// child inherits the host's environment, and with it the variables holding the other
/// bindings' tokens (`token_env`): a child (often a third-party package) must not be able
/// to read them. Here the token variable is `CARGO_PKG_NAME`, the one cargo sets.
#[tokio::test]
async fn a_stdio_child_cannot_read_the_token_variables_of_the_host_s_bindings() {
    const TOKEN_VAR: &str = "CARGO_PKG_NAME";
    let token = std::env::var(TOKEN_VAR).expect("cargo sets CARGO_PKG_NAME for tests");
    let config = HostConfig::from_value(&json!({"tools": [{
        "name": "remote_search",
        "description": "An HTTP tool whose key is in the environment.",
        "input_schema": {"type": "object"},
        "url": "http://127.0.0.1:9/mcp",
        "mcp_tool": "search",
        "token_env": TOKEN_VAR,
        "tenants": [ACME],
        "timeout_seconds": 5,
        "max_output_bytes": 4096
    }, {
        "name": "oauth_search",
        "description": "An HTTP tool whose OAuth client secret is in the environment.",
        "input_schema": {"type": "object"},
        "url": "http://127.0.0.1:9/mcp",
        "mcp_tool": "search",
        "oauth": {"issuer": "http://127.0.0.1:9", "client_id": "c", "client_secret_env": "CARGO_PKG_VERSION"},
        "tenants": [ACME]
    }]}))
    .expect("a config");
    let m = marker("env");
    let host = ToolHost::new(config, ClientConfig::default()).expect("a host");
    host.add_server(hostile("2026", "env", &m).env("EXPLICIT_FOR_CHILD", "given"))
        .await
        .expect("the tools load");
    let read = |name: &str| call(ACME, "c", json!({ "name": name }), 10);
    let out = call_as(&host, "work", read(TOKEN_VAR)).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let seen = out.result["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        !seen.contains(&token),
        "the stdio child read another binding's token from its environment: {seen:?}"
    );
    let out = call_as(&host, "work", read("CARGO_PKG_VERSION")).await;
    assert_eq!(
        out.result["content"][0]["text"], "",
        "the OAuth secret variable: {}",
        out.result
    );
    // What the application gives the child, and the rest of the environment, it still gets.
    let out = call_as(&host, "work", read("EXPLICIT_FOR_CHILD")).await;
    assert_eq!(out.result["content"][0]["text"], "given", "{}", out.result);
    let out = call_as(&host, "work", read("PATH")).await;
    assert_ne!(out.result["content"][0]["text"], "", "{}", out.result);
    gone(host, &m).await;
}
