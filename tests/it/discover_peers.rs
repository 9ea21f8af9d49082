//! Discovery against real servers (issue 6, "Done when"): the printed bindings match the
//! servers' own tool lists (captured in the proto fixtures, schemas byte for byte), and the
//! output loads as a host config and drives a call.

use brain_mcp_bind::discover::{self, Request};
use brain_mcp_bind::{Era, McpClient, McpExecutor};
use brain_tests::peers::{Peer, PeerKind};
use brain_tools_core::{HostConfig, NoProgress, ToolCall, ToolResultEvent, run_call};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::discover_support::{
    ListedTool, TENANT, assert_bindings, fixture_tools, mcp_tools, names,
};

fn start(kind: PeerKind) -> Peer {
    Peer::start(kind).unwrap_or_else(|e| panic!("starting peer {kind}: {e}"))
}

/// Runs `mcp-tools` for every tool in `listed`, asking for them in reverse order.
fn discover_cli(url: &str, listed: &mut [ListedTool]) -> String {
    listed.reverse();
    let tools = names(listed);
    let r = mcp_tools(&["-url", url, "-tenant", TENANT, "-tools", &tools]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.is_empty(), "{r:?}");
    r.stdout
}

#[test]
fn everything_server_bindings_match_its_tool_list() {
    let peer = start(PeerKind::Everything);
    let mut listed = fixture_tools("everything", "tools-list.jsonl");
    assert!(listed.len() >= 10, "the reference server lists its tools");
    let out = discover_cli(&peer.url(), &mut listed);
    assert_bindings(&out, &listed, &peer.url());
}

#[test]
fn python_server_bindings_match_its_paged_list_in_the_2026_era() {
    let peer = start(PeerKind::PythonSdk);
    let mut listed = fixture_tools("python", "tools-list-paginated.jsonl");
    assert!(listed.len() > 10, "the list spans pages of 5");
    let out = discover_cli(&peer.url(), &mut listed);
    assert_bindings(&out, &listed, &peer.url());
}

#[tokio::test]
async fn python_server_bindings_match_its_paged_list_in_the_handshake_era() {
    let peer = tokio::task::spawn_blocking(|| start(PeerKind::PythonSdk))
        .await
        .expect("start task");
    let mut listed = fixture_tools("python", "handshake-tools-list-paginated.jsonl");
    listed.reverse();
    let client = McpClient::new().expect("client");
    client.set_era(&peer.url(), Era::Handshake);
    let request = Request::new(
        peer.url(),
        TENANT,
        listed.iter().map(|t| t.name.clone()).collect(),
    );
    let found = discover::discover(&client, &request)
        .await
        .expect("discovery works");
    assert_eq!(found.era, Era::Handshake);
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    assert!(client.flush(std::time::Duration::from_secs(10)).await);
    let out = serde_json::to_string_pretty(&found.bindings).expect("printable");
    assert_bindings(&out, &listed, &peer.url());
}

/// Loads `{"tools": <printed>}` through the host-config loader and calls `tool`.
fn call_from_printed(printed: &str, tool: &str, arguments: Value) -> ToolResultEvent {
    let document = format!("{{\"tools\": {printed}}}");
    let config = HostConfig::load(&document).expect("the printed bindings load unchanged");
    let binding = config.get(tool).expect("the binding").clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let executor = McpExecutor::new(McpClient::new().expect("client"));
        let call = ToolCall::new(
            TENANT.to_owned(),
            "discovery-session".to_owned(),
            "discovery-call-1".to_owned(),
            arguments,
        );
        let event = run_call(
            &binding,
            call,
            &executor,
            &NoProgress,
            &CancellationToken::new(),
        )
        .await;
        executor
            .client()
            .flush(std::time::Duration::from_secs(10))
            .await;
        event
    })
}

#[test]
fn discovered_bindings_load_as_a_host_config_and_call_the_tools() {
    let everything = start(PeerKind::Everything);
    let r = mcp_tools(&[
        "-url",
        &everything.url(),
        "-tenant",
        TENANT,
        "-tools",
        "get-sum,echo",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let event = call_from_printed(&r.stdout, "get-sum", json!({"a": 2, "b": 3}));
    assert_eq!(
        serde_json::to_value(&event).expect("json"),
        json!({
            "call_id": "discovery-call-1",
            "is_error": false,
            "content": [{"type": "text", "text": "The sum of 2 and 3 is 5."}],
        })
    );
    // The printed input schema is enforced: a missing argument never reaches the server.
    let event = call_from_printed(&r.stdout, "get-sum", json!({"a": 2}));
    assert_eq!(
        event.error.as_ref().map(|e| e.kind.as_str()),
        Some("invalid_arguments"),
        "{event:?}"
    );

    let python = start(PeerKind::PythonSdk);
    let r = mcp_tools(&["--url", &python.url(), "--tenant", TENANT, "--tools=add"]);
    assert_eq!(r.code, 0, "{r:?}");
    let event = call_from_printed(&r.stdout, "add", json!({"a": 2, "b": 3}));
    assert!(!event.is_error, "{event:?}");
    let structured = event
        .structured_content
        .as_ref()
        .map(|s| s.to_value().expect("json"));
    assert_eq!(structured, Some(json!({"sum": 5})));
}

#[test]
fn list_prints_every_tool_the_reference_server_offers_one_per_line() {
    let peer = start(PeerKind::Everything);
    let listed = fixture_tools("everything", "tools-list.jsonl");
    let r = mcp_tools(&["-list", &peer.url()]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), listed.len(), "{r:?}");
    for (line, tool) in lines.iter().zip(&listed) {
        let (name, description) = line.split_once('\t').expect("name, tab, description");
        assert_eq!(name, tool.name);
        let first = tool
            .description
            .as_deref()
            .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("")
            .trim();
        assert!(
            first.starts_with(description.trim_end_matches('…')),
            "{line}"
        );
    }
}

#[test]
fn list_and_bind_flags_do_not_mix() {
    let r = mcp_tools(&["-list", "http://127.0.0.1:9/mcp", "-tools", "a"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("-tools binds tools; -list only lists them"),
        "{r:?}"
    );
    let r = mcp_tools(&["-list", "ftp://example.com/mcp"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.starts_with("mcp-tools: -list: the URL"), "{r:?}");
}
