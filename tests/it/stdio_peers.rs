//! Managed stdio servers of the other real SDKs: the TypeScript reference server
//! (`server-everything stdio`, handshake era only) and the rmcp server (2026 era over
//! stdio); and the Python SDK's tools that ask for user input, with and without a
//! responder.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{
    ClientConfig, Era, HostConfig, ManagedServer, Refusal, Responder, ServerRequest, ToolHost,
    ToolSpec,
};
use brain_mcp_proto::jsonrpc::ErrorCode;
use brain_tests::peers::Peer;
use serde_json::{Value, json};

use crate::stdio_support::{TENANT, assert_failure, call, host, python};

#[tokio::test]
async fn the_typescript_reference_server_over_stdio() {
    let cmd = Peer::everything_stdio_command().expect("server-everything");
    let server = ManagedServer::stdio("everything", &cmd.program)
        .args(&cmd.args)
        .tool(ToolSpec::new("echo", [TENANT]))
        .tool(ToolSpec::new("get-sum", [TENANT]).rename("sum"))
        .tool(ToolSpec::new("trigger-long-running-operation", [TENANT]).rename("long"));
    let host = host();
    let names = host.add_server(server).await.expect("its tools load");
    assert_eq!(names, ["echo", "sum", "long"]);
    let status = host.server_status("everything").expect("status");
    assert_eq!(
        status.era.as_deref(),
        Some("handshake"),
        "it answers -32601 to the probe"
    );

    let out = call(&host, "echo", "c-echo", json!({"message": "hello"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.result["content"][0]["text"], "Echo: hello");
    let out = call(&host, "sum", "c-sum", json!({"a": 2, "b": 3})).await;
    assert!(
        out.result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains('5')),
        "{}",
        out.result
    );
    let out = call(&host, "long", "c-long", json!({"duration": 1, "steps": 3})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(out.progress.len(), 3, "{:?}", out.progress);
    assert_eq!(out.progress[2]["progress"], 3);
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn the_rmcp_server_over_stdio_serves_concurrent_calls_from_one_child() {
    let cmd = Peer::rmcp_stdio_command().expect("the rmcp peer");
    let mut server = ManagedServer::stdio("rmcp", &cmd.program).args(&cmd.args);
    for tool in ["echo", "add", "progress", "fail"] {
        server = server.tool(ToolSpec::new(tool, [TENANT]));
    }
    let host = host();
    host.add_server(server).await.expect("its tools load");
    let status = host.server_status("rmcp").expect("status");
    assert_eq!(status.era.as_deref(), Some("2026-07-28"));

    // Progress of one call and the answers of others interleave on one child.
    let slow = call(&host, "progress", "c-progress", json!({"steps": 5}));
    let quick = async {
        let mut texts = Vec::new();
        for i in 0..5 {
            let out = call(
                &host,
                "echo",
                &format!("c-echo-{i}"),
                json!({"text": format!("t{i}")}),
            )
            .await;
            texts.push(out.result["content"][0]["text"].clone());
        }
        texts
    };
    let (slow, texts) = tokio::join!(slow, quick);
    assert_eq!(
        texts,
        (0..5).map(|i| json!(format!("t{i}"))).collect::<Vec<_>>()
    );
    assert_eq!(slow.progress.len(), 5, "{:?}", slow.progress);
    assert!(slow.progress.iter().all(|p| p["call_id"] == "c-progress"));
    assert_eq!(slow.result["content"][0]["text"], "done after 5 steps");

    let out = call(&host, "add", "c-add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        out.result["structured_content"],
        json!({"sum": 3}),
        "{}",
        out.result
    );
    let out = call(&host, "fail", "c-fail", json!({})).await;
    assert_eq!(out.result["is_error"], true);
    assert_eq!(out.result["unknown_outcome"], false);
    assert!(host.shutdown(Duration::from_secs(10)).await);
}

/// Confirms every form and records what it was asked.
#[derive(Default)]
struct Confirming {
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Responder for Confirming {
    async fn answer(&self, request: &ServerRequest<'_>) -> Result<Value, Refusal> {
        self.asked
            .lock()
            .expect("log")
            .push(request.method.to_owned());
        match request.method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {"ok": true}})),
            other => Err(Refusal::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("no {other}"),
            )),
        }
    }
}

fn asking(name: &str, era: Option<Era>) -> ManagedServer {
    let server = python(name)
        .tool(ToolSpec::new("ask", [TENANT]))
        .tool(ToolSpec::new("confirm", [TENANT]));
    match era {
        Some(era) => server.era(era),
        None => server,
    }
}

#[tokio::test]
async fn python_tools_that_ask_for_input_fail_without_a_user_in_both_eras() {
    let host = host();
    host.add_server(asking("ask-2026", None))
        .await
        .expect("loads");
    // 2026 over stdio: the SDK has no back-channel for the request and says so.
    let out = call(&host, "ask", "c-ask", json!({"question": "go on?"})).await;
    let message = assert_failure(&out.result, "rpc_error", true);
    assert!(message.contains("-32600"), "{message}");

    let handshake = self::host();
    handshake
        .add_server(asking("ask-handshake", Some(Era::Handshake)))
        .await
        .expect("loads");
    // In a session the server sends elicitation/create; without a user it is refused.
    let out = call(&handshake, "ask", "c-ask", json!({"question": "go on?"})).await;
    let message = assert_failure(&out.result, "user_input_required", true);
    assert!(message.contains("elicitation/create"), "{message}");
    assert!(host.shutdown(Duration::from_secs(10)).await);
    assert!(handshake.shutdown(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn a_responder_answers_python_input_requests_in_both_eras() {
    for (label, era, tool) in [
        ("handshake", Some(Era::Handshake), "ask"),
        ("2026", None, "confirm"),
    ] {
        let responder = Arc::new(Confirming::default());
        let config = HostConfig::from_value(&json!({"tools": []})).expect("config");
        let host = ToolHost::with_responder(config, ClientConfig::default(), responder.clone())
            .expect("a host");
        host.add_server(asking(&format!("responder-{label}"), era))
            .await
            .expect("loads");
        let out = call(&host, tool, "c-1", json!({"question": "sure?"})).await;
        assert_eq!(out.result["is_error"], false, "{label}: {}", out.result);
        let text = out.result["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("accept") || text.contains("confirmed: True"),
            "{label}: {text}"
        );
        assert_eq!(
            *responder.asked.lock().expect("log"),
            ["elicitation/create"],
            "{label}"
        );
        assert!(host.shutdown(Duration::from_secs(10)).await);
    }
}
