//! Calls against the Python SDK server in both eras: stateless by detection, and the
//! handshake when forced with `McpClient::set_era`.

use brain_mcp_bind::Era;
use brain_tests::peers::{Peer, PeerKind};
use serde_json::{Value, json};

use crate::call_support::{
    Harness, assert_failure, call, discovered, progress, success, tool_error,
};

/// The SDK wraps a tool's plain `str` return value as structured `{"result": …}`: Brain
/// keeps the server's text block and adds one holding the JSON.
fn wrapped_text(call_id: &str, text: &str) -> Value {
    let structured = json!({"result": text});
    let content = json!([{"type": "text", "text": text},
        {"type": "text", "text": structured.to_string()}]);
    success(call_id, content, Some(structured))
}

/// Calls text, structured, progress and failing tools in whichever era the client uses.
async fn common_tools(h: &Harness, url: &str, era: &str) {
    let tools = ["echo", "add", "progress", "fail", "image"];
    let config = discovered(h, url, &tools).await;
    let get = |name: &str| config.get(name).expect("a discovered binding").clone();
    let id = |name: &str| format!("{era}-{name}");

    let out = call(h, &get("echo"), &id("echo"), json!({"text": "hi there"})).await;
    assert_eq!(out.result, wrapped_text(&id("echo"), "hi there"));

    let add = get("add");
    assert!(
        add.output_schema().is_some(),
        "add declares an output schema"
    );
    let out = call(h, &add, &id("add"), json!({"a": 2, "b": 40})).await;
    let content = out.result["content"].as_array().expect("content").clone();
    assert_eq!(content.len(), 1, "exactly one text block: {}", out.result);
    let text = content[0]["text"].as_str().expect("a text block");
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("JSON text"),
        json!({"sum": 42})
    );
    assert_eq!(
        out.result,
        success(&id("add"), json!(content), Some(json!({"sum": 42})))
    );

    let out = call(h, &get("progress"), &id("progress"), json!({"steps": 3})).await;
    let expected: Vec<Value> = (1..=3)
        .map(|i| progress(&id("progress"), i, Some(3), Some(&format!("step {i} of 3"))))
        .collect();
    assert_eq!(out.progress, expected);
    assert_eq!(
        out.result,
        wrapped_text(&id("progress"), "done after 3 steps")
    );

    let out = call(h, &get("fail"), &id("fail"), json!({"reason": "nope"})).await;
    let content = out.result["content"].clone();
    let text = content[0]["text"].as_str().expect("a text block");
    assert!(text.contains("nope"), "{text}");
    assert_eq!(out.result, tool_error(&id("fail"), content));

    let out = call(h, &get("image"), &id("image"), json!({})).await;
    assert_eq!(out.result["content"][0]["type"], "image", "{}", out.result);
    assert_eq!(out.result["content"][0]["mime_type"], "image/png");
}

#[tokio::test]
async fn stateless_era_by_detection() {
    let peer = Peer::start(PeerKind::PythonSdk).expect("start the Python SDK server");
    let h = Harness::new();
    common_tools(&h, &peer.url(), "stateless").await;
    assert!(
        matches!(h.client.era(&peer.url()), Some(Era::Stateless(_))),
        "detected {:?}",
        h.client.era(&peer.url())
    );

    // The server will not ask a client that declared no elicitation capability: it refuses
    // the call with its own JSON-RPC error.
    let config = discovered(&h, &peer.url(), &["ask"]).await;
    let ask = config.get("ask").expect("binding");
    let out = call(&h, ask, "stateless-ask", json!({"question": "go on?"})).await;
    let message = assert_failure(&out.result, "rpc_error", true);
    assert!(message.contains("error -32600"), "{message}");

    // A resolver elicitation is refused with -32021 (missing capability) rather than asked
    // with input_required, because we declared no elicitation.
    let config = discovered(&h, &peer.url(), &["confirm"]).await;
    let confirm = config.get("confirm").expect("binding");
    let out = call(
        &h,
        confirm,
        "stateless-confirm",
        json!({"question": "sure?"}),
    )
    .await;
    let message = assert_failure(&out.result, "rpc_error", true);
    assert!(message.contains("error -32021"), "{message}");
    h.flush().await;
}

#[tokio::test]
async fn handshake_era_when_forced() {
    let peer = Peer::start(PeerKind::PythonSdk).expect("start the Python SDK server");
    let h = Harness::new();
    h.client.set_era(&peer.url(), Era::Handshake);
    common_tools(&h, &peer.url(), "handshake").await;
    assert_eq!(h.client.era(&peer.url()), Some(Era::Handshake));

    // In a session the server sends elicitation/create; Brain refuses it and the call fails.
    let config = discovered(&h, &peer.url(), &["ask"]).await;
    let ask = config.get("ask").expect("binding");
    let out = call(&h, ask, "handshake-ask", json!({"question": "go on?"})).await;
    let message = assert_failure(&out.result, "user_input_required", true);
    assert!(message.contains("elicitation/create"), "{message}");

    let config = discovered(&h, &peer.url(), &["confirm"]).await;
    let confirm = config.get("confirm").expect("binding");
    // A resolver elicitation is refused with -32021 here too: the server checks the
    // capability we declared before it would ask.
    let out = call(
        &h,
        confirm,
        "handshake-confirm",
        json!({"question": "sure?"}),
    )
    .await;
    let message = assert_failure(&out.result, "rpc_error", true);
    assert!(message.contains("error -32021"), "{message}");
    // The client is still usable after the refusals: a plain call works.
    let config = discovered(&h, &peer.url(), &["echo"]).await;
    let out = call(
        &h,
        config.get("echo").expect("binding"),
        "after",
        json!({"text": "ok"}),
    )
    .await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    h.flush().await;
}
