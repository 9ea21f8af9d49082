//! The host facade over HTTP: configured bindings and a managed HTTP server with a token
//! given in code side by side, many tenants' calls at once on one instance, a slow
//! consumer, a call's own deadline, and cancelling by token.

use std::time::Duration;

use brain_mcp_bind::HostErrorKind;
use brain_mcp_bind::{
    CancellationToken, ClientConfig, HostConfig, ManagedServer, Secret, ToolCall, ToolEvent,
    ToolHost, ToolSpec,
};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::stdio_support::{TENANT, assert_failure, call, call_as};

const TOKEN: &str = "tok-facade-7f3a9c21";
const TENANTS: [&str; 4] = [TENANT, "tenant-b", "tenant-c", "tenant-d"];

fn host_with(url: &str) -> ToolHost {
    let config = HostConfig::from_value(&json!({"tools": [{
        "name": "cfg_echo",
        "description": "echo, configured",
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": "echo",
        "tenants": TENANTS,
        "timeout_seconds": 30,
    }]}))
    .expect("config");
    ToolHost::new(config, ClientConfig::default()).expect("a host")
}

fn managed(url: &str) -> ManagedServer {
    ManagedServer::http("locked", url)
        .bearer(Secret::new(TOKEN))
        .tool(ToolSpec::new("progress", [TENANT]).rename("steps"))
        .tool(ToolSpec::new("hang", [TENANT]).timeout(Duration::from_secs(30)))
        .tool(ToolSpec::new("echo", ["tenant-b"]).rename("locked_echo"))
}

fn locked_server() -> TestServer {
    let mut config = ServerConfig::new(Era::Handshake);
    config.require_token = Some(TOKEN.to_owned());
    config.fault_tools = true;
    TestServer::start(config)
}

#[tokio::test]
async fn configured_and_managed_tools_share_one_host_and_the_token_stays_hidden() {
    fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync_clone::<ToolHost>();

    let open = TestServer::start(ServerConfig::new(Era::Stateless));
    let locked = locked_server();
    let host = host_with(&open.url());
    let names = host.add_server(managed(&locked.url())).await.expect("adds");
    assert_eq!(names, ["steps", "hang", "locked_echo"]);
    let shown = |tenant: &str| -> Vec<String> {
        host.tools_for(tenant).into_iter().map(|t| t.name).collect()
    };
    assert_eq!(shown(TENANT), ["cfg_echo", "steps", "hang"]);
    assert_eq!(shown("tenant-b"), ["cfg_echo", "locked_echo"]);
    assert_eq!(shown("nobody"), Vec::<String>::new());

    let out = call(&host, "steps", "c-steps", json!({"steps": 3})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.progress.len(), 3);
    // Another tenant's tool, and a tool nobody serves, are refused alike.
    for tool in ["locked_echo", "no_such_tool"] {
        let out = call(&host, tool, "c-x", json!({})).await;
        assert_failure(&out.result, "tenant_not_allowed", false);
    }
    let as_b = ToolCall::new("tenant-b", "s", "c-b", json!({"text": TOKEN}));
    let out = call_as(&host, "locked_echo", as_b).await;
    let text = out.result.to_string();
    assert!(!text.contains(TOKEN), "the token is redacted: {text}");
    assert!(text.contains("[redacted]"), "{text}");

    // Many tenants' calls at once on one instance: clones share it across tasks.
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let host = host.clone();
            tokio::spawn(async move {
                let tenant = TENANTS[i % TENANTS.len()];
                let args = json!({"text": format!("n{i}")});
                let call = ToolCall::new(tenant, "s", format!("c-{i}"), args);
                call_as(&host, "cfg_echo", call).await.result["content"][0]["text"].clone()
            })
        })
        .collect();
    let mut texts = Vec::new();
    for task in tasks {
        texts.push(task.await.expect("the call's task"));
    }
    assert_eq!(
        texts,
        (0..24).map(|i| json!(format!("n{i}"))).collect::<Vec<_>>()
    );

    // Adding a tool under a name already served adds nothing.
    let again = ManagedServer::http("again", open.url())
        .tool(ToolSpec::new("echo", [TENANT]).rename("cfg_echo"));
    assert!(matches!(
        host.add_server(again).await.map_err(|e| e.kind()),
        Err(HostErrorKind::Invalid)
    ));
    let missing = ManagedServer::http("again", open.url()).tool(ToolSpec::new("ecko", [TENANT]));
    match host.add_server(missing).await {
        Err(e) if e.kind() == HostErrorKind::Missing => {
            assert!(e.message().contains("did you mean \"echo\""), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn a_slow_consumer_loses_progress_counted_but_never_the_result() {
    let server = locked_server();
    let host = host_with(&server.url()).progress_buffer(2);
    host.add_server(managed(&server.url())).await.expect("adds");
    let mut handle = host.call(
        "steps",
        ToolCall::new(TENANT, "s", "c-slow", json!({"steps": 40, "delay_ms": 1})),
    );
    // Read nothing until the call is surely over: the call must not wait for us.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut progress = 0;
    let mut result = None;
    // Through `Stream` (the inherent `next` would shadow it).
    while let Some(event) = futures_util::StreamExt::next(&mut handle).await {
        match event {
            ToolEvent::Progress(_) => progress += 1,
            ToolEvent::Result(r) => result = Some(r),
            _ => {}
        }
    }
    let result = result.expect("the result");
    assert!(!result.is_error, "{result:?}");
    assert_eq!(progress, 2, "the buffer's worth");
    assert_eq!(handle.dropped_progress(), 38);
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn a_call_ends_by_its_own_deadline_or_a_parent_token() {
    let server = locked_server();
    let host = host_with(&server.url());
    host.add_server(managed(&server.url())).await.expect("adds");
    let start = std::time::Instant::now();
    let call =
        ToolCall::new(TENANT, "s", "c-short", json!({})).with_timeout(Duration::from_millis(800));
    let out = call_as(&host, "hang", call).await;
    let message = assert_failure(&out.result, "timeout", true);
    assert!(message.contains("own limit of 0.8 s"), "{message}");
    assert!(start.elapsed() < Duration::from_secs(5));

    let parent = CancellationToken::new();
    let handle = host.call_with(
        "hang",
        ToolCall::new(TENANT, "s", "c-cancel", json!({})),
        parent.child_token(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    parent.cancel();
    let result = handle.result().await;
    assert_eq!(
        result.error.map(|e| e.kind.as_str().to_owned()).as_deref(),
        Some("cancelled")
    );
    assert_eq!(result.unknown_outcome, Some(true));
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn a_session_token_survives_the_calls_it_watches_and_handles_are_streams() {
    let server = locked_server();
    let host = host_with(&server.url());
    host.add_server(managed(&server.url())).await.expect("adds");
    // One token for the whole session: a call that ends, or whose handle is dropped or
    // cancelled, never fires it.
    let session = CancellationToken::new();
    let mut handle = host.call_with(
        "steps",
        ToolCall::new(TENANT, "s", "c-stream", json!({"steps": 2})),
        session.clone(),
    );
    let mut events = Vec::new();
    // Through `Stream` (the inherent `next` would shadow it).
    while let Some(event) = futures_util::StreamExt::next(&mut handle).await {
        events.push(serde_json::to_value(&event).expect("event JSON"));
    }
    assert_eq!(
        events.len(),
        3,
        "two progress events, then the result: {events:?}"
    );
    assert_eq!(events[2]["type"], "tool.result");
    drop(handle);
    let dropped = host.call_with(
        "hang",
        ToolCall::new(TENANT, "s", "c-dropped", json!({})),
        session.clone(),
    );
    dropped.cancel();
    drop(dropped);
    assert!(!session.is_cancelled(), "the caller's token was fired");
    // It still cancels what it watches.
    let watched = host.call_with(
        "hang",
        ToolCall::new(TENANT, "s", "c-w", json!({})),
        session.clone(),
    );
    session.cancel();
    assert_eq!(
        watched
            .result()
            .await
            .error
            .map(|e| e.kind.as_str().to_owned())
            .as_deref(),
        Some("cancelled")
    );
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

#[test]
fn a_call_outside_a_runtime_says_so_instead_of_panicking() {
    let host = host_with("http://127.0.0.1:9/mcp");
    let handle = host.call("cfg_echo", ToolCall::new(TENANT, "s", "c-no-rt", json!({})));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let result = rt.block_on(handle.result());
    let error = result.error.expect("a failure");
    assert_eq!(error.kind.as_str(), "cancelled");
    assert!(error.message.contains("Tokio runtime"), "{}", error.message);
}

#[tokio::test]
async fn a_managed_server_binds_its_tools_by_the_rules_discovery_follows() {
    use crate::discover_support::{Behaviour, TinyServer};
    let object = json!({"type": "object"});
    let tiny = TinyServer::start(Behaviour::Tools(vec![
        json!({"name": "a.b", "inputSchema": object}),
        json!({"name": "a_b", "inputSchema": object}),
        json!({"name": "bad", "inputSchema": {"type": "object",
            "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}}),
    ]));
    let empty = HostConfig::from_value(&json!({"tools": []})).expect("config");
    let host = ToolHost::new(empty, ClientConfig::default()).expect("a host");
    // A tool hidden for its header annotation is missing, with the reason, as in
    // `mcp-tools`.
    let hidden = ManagedServer::http("tiny", tiny.url()).tool(ToolSpec::new("bad", [TENANT]));
    match host.add_server(hidden).await {
        Err(e) if e.kind() == HostErrorKind::Missing => assert!(
            e.message()
                .contains("\"bad\" (not offered: invalid x-mcp-header annotation"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    // Two remote names that meet as binding names get distinct ones.
    let meeting = ManagedServer::http("tiny", tiny.url())
        .tool(ToolSpec::new("a.b", [TENANT]))
        .tool(ToolSpec::new("a_b", [TENANT]));
    let names = host.add_server(meeting).await.expect("both bound");
    assert_eq!(names, ["a_b", "a_b_2"]);
    assert!(host.shutdown(Duration::from_secs(10)).await);
}
