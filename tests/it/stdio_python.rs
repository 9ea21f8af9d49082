//! The Python SDK server over stdio as a managed server, in both eras: detected as
//! 2026-07-28 (one shared child), and forced to the handshake (a child per call).

use std::time::Duration;

use brain_mcp_bind::{Era, ToolSpec};
use serde_json::json;

use crate::stdio_support::{TENANT, assert_failure, call, host, python};

fn tools() -> Vec<ToolSpec> {
    ["echo", "add", "progress", "ask", "fail"]
        .into_iter()
        .map(|t| ToolSpec::new(t, [TENANT]).timeout(Duration::from_secs(60)))
        .collect()
}

async fn common(era: Option<Era>, label: &str) {
    let host = host();
    let mut server = python(&format!("py-{label}"));
    for tool in tools() {
        server = server.tool(tool);
    }
    if let Some(era) = era {
        server = server.era(era);
    }
    let names = host
        .add_server(server)
        .await
        .expect("the server's tools load");
    assert_eq!(names, ["echo", "add", "progress", "ask", "fail"]);
    let shown = host.tools_for(TENANT);
    assert_eq!(shown.len(), 5);
    assert_eq!(shown[0].name, "echo");
    assert_eq!(shown[0].description, "Returns the given text.");
    assert_eq!(
        shown[0].input_schema["properties"]["text"]["type"],
        "string"
    );
    assert!(host.tools_for("someone-else").is_empty());

    let out = call(&host, "echo", "c-echo", json!({"text": "hi there"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.result["content"][0]["text"], "hi there");
    assert_eq!(
        out.result["structured_content"],
        json!({"result": "hi there"})
    );

    let out = call(&host, "add", "c-add", json!({"a": 2, "b": 40})).await;
    assert_eq!(
        out.result["structured_content"],
        json!({"sum": 42}),
        "{}",
        out.result
    );

    let out = call(&host, "progress", "c-progress", json!({"steps": 3})).await;
    let expected: Vec<_> = (1..=3)
        .map(|i| {
            json!({"type": "tool.progress", "call_id": "c-progress", "progress": i,
            "total": 3, "message": format!("step {i} of 3")})
        })
        .collect();
    assert_eq!(out.progress, expected);
    assert_eq!(out.result["content"][0]["text"], "done after 3 steps");

    let out = call(&host, "fail", "c-fail", json!({"reason": "nope"})).await;
    assert_eq!(out.result["is_error"], true);
    assert_eq!(out.result["unknown_outcome"], false, "the tool's own error");

    // Arguments are checked before anything reaches the child.
    let out = call(&host, "add", "c-bad", json!({"a": "two"})).await;
    assert_failure(&out.result, "invalid_arguments", false);

    let status = host
        .server_status(&format!("py-{label}"))
        .expect("a status");
    assert_eq!(status.crashes, 0, "{status:?}");
    (host, label).0.shutdown(Duration::from_secs(10)).await;
}

#[tokio::test]
async fn detected_as_2026_one_child_serves_every_call() {
    common(None, "stateless").await;
}

#[tokio::test]
async fn forced_to_the_handshake_a_child_per_call() {
    common(Some(Era::Handshake), "handshake").await;
}
