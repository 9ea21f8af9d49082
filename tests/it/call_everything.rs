//! Calls against the TypeScript reference server (`server-everything`, handshake era).

use base64::Engine as _;
use brain_mcp_bind::Era;
use brain_mcp_bind::discover::{self, Request};
use brain_tests::peers::{Peer, PeerKind};
use serde_json::{Value, json};

use crate::call_support::{Harness, TENANT, assert_failure, call, discovered, progress, success};

fn start() -> Peer {
    Peer::start(PeerKind::Everything).expect("start server-everything")
}

/// Asserts `block` is an image block holding a base64 PNG; returns its data.
fn assert_png(block: &Value) -> String {
    let keys: Vec<&String> = block.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["data", "mime_type", "type"], "{block}");
    assert_eq!(block["type"], "image");
    assert_eq!(block["mime_type"], "image/png");
    let data = block["data"].as_str().expect("base64 data");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("data is standard base64");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    data.to_owned()
}

#[tokio::test]
async fn text_image_and_structured_results() {
    let peer = start();
    let h = Harness::new();
    let tools = [
        "echo",
        "get-sum",
        "get-annotated-message",
        "get-tiny-image",
        "get-structured-content",
    ];
    let config = discovered(&h, &peer.url(), &tools).await;
    assert_eq!(h.client.era(&peer.url()), Some(Era::Handshake));
    let get = |name: &str| config.get(name).expect("a discovered binding").clone();

    let out = call(&h, &get("echo"), "c-echo", json!({"message": "hello"})).await;
    let text = json!([{"type": "text", "text": "Echo: hello"}]);
    assert_eq!(out.result, success("c-echo", text, None));
    assert!(out.progress.is_empty());

    let out = call(&h, &get("get-sum"), "c-sum", json!({"a": 2, "b": 3})).await;
    let text = json!([{"type": "text", "text": "The sum of 2 and 3 is 5."}]);
    assert_eq!(out.result, success("c-sum", text, None));

    // Annotations are not part of Brain's blocks: only type, text / data, mime_type remain.
    let args = json!({"messageType": "error", "includeImage": true});
    let out = call(&h, &get("get-annotated-message"), "c-ann", args).await;
    let content = out.result["content"].as_array().expect("content").clone();
    assert_eq!(content.len(), 2, "{}", out.result);
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "Error: Operation failed"})
    );
    let data = assert_png(&content[1]);
    let expected =
        json!([content[0].clone(), {"type": "image", "data": data, "mime_type": "image/png"}]);
    assert_eq!(out.result, success("c-ann", expected, None));

    let out = call(&h, &get("get-tiny-image"), "c-img", json!({})).await;
    let content = out.result["content"].as_array().expect("content").clone();
    assert_eq!(content.len(), 3, "{}", out.result);
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "Here's the image you requested:"})
    );
    let data = assert_png(&content[1]);
    assert_eq!(
        content[2],
        json!({"type": "text", "text": "The image above is the MCP logo."})
    );
    let expected = json!([content[0].clone(), {"type": "image", "data": data, "mime_type": "image/png"}, content[2].clone()]);
    assert_eq!(out.result, success("c-img", expected, None));

    // The server already sends the JSON as text: it must not be duplicated. The discovered
    // binding carries the tool's output schema, so the value was also validated.
    let binding = get("get-structured-content");
    assert!(
        binding.output_schema().is_some(),
        "the tool has an output schema"
    );
    let out = call(&h, &binding, "c-st", json!({"location": "New York"})).await;
    let structured = out.result["structured_content"].clone();
    for key in ["temperature", "conditions", "humidity"] {
        assert!(structured.get(key).is_some(), "{key} missing: {structured}");
    }
    let content = out.result["content"].as_array().expect("content").clone();
    assert_eq!(content.len(), 1, "one text block: {}", out.result);
    let text = content[0]["text"].as_str().expect("a text block");
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("JSON text"),
        structured
    );
    assert_eq!(
        out.result,
        success("c-st", json!([content[0].clone()]), Some(structured))
    );
    h.flush().await;
}

#[tokio::test]
async fn long_running_operation_streams_progress_in_order() {
    let peer = start();
    let h = Harness::new();
    let config = discovered(&h, &peer.url(), &["trigger-long-running-operation"]).await;
    let binding = config
        .get("trigger-long-running-operation")
        .expect("binding");
    let out = call(&h, binding, "c-long", json!({"duration": 1, "steps": 3})).await;
    assert_eq!(
        out.progress,
        [
            progress("c-long", 1, Some(3), None),
            progress("c-long", 2, Some(3), None),
            progress("c-long", 3, Some(3), None),
        ]
    );
    let text = "Long running operation completed. Duration: 1 seconds, Steps: 3.";
    assert_eq!(
        out.result,
        success("c-long", json!([{"type": "text", "text": text}]), None)
    );
    h.flush().await;
}

#[tokio::test]
async fn resources_are_unsupported() {
    let peer = start();
    let h = Harness::new();
    let tools = [
        "get-resource-links",
        "get-resource-reference",
        "simulate-research-query",
    ];
    let config = discovered(&h, &peer.url(), &tools).await;
    let get = |name: &str| config.get(name).expect("a discovered binding").clone();

    let out = call(
        &h,
        &get("get-resource-links"),
        "c-links",
        json!({"count": 2}),
    )
    .await;
    let message = assert_failure(&out.result, "unsupported_content", true);
    assert!(message.contains("resource_link"), "{message}");

    let args = json!({"resourceType": "Text", "resourceId": 1});
    let out = call(&h, &get("get-resource-reference"), "c-ref", args).await;
    let message = assert_failure(&out.result, "unsupported_content", true);
    assert!(message.contains("resource"), "{message}");

    h.flush().await;
}

#[tokio::test]
async fn tools_needing_client_capabilities_are_not_listed() {
    let peer = start();
    let h = Harness::new();
    let hidden = [
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "get-roots-list",
    ];
    let request = Request::new(
        peer.url(),
        TENANT,
        hidden.iter().map(|t| (*t).to_owned()).collect(),
    );
    let err = discover::discover(&h.client, &request)
        .await
        .expect_err("the capability-gated tools are not offered to us");
    for name in hidden {
        assert!(
            err.to_string().contains(&format!("{name:?}")),
            "{name} not named: {err}"
        );
    }
    assert!(
        err.to_string().starts_with("the server has no tool named"),
        "{err}"
    );
    // The ordinary tools are there on the same server.
    discovered(&h, &peer.url(), &["echo", "get-env"]).await;
    h.flush().await;
}

#[tokio::test]
async fn a_timed_out_call_is_cleaned_up_and_the_client_goes_on() {
    let peer = start();
    let h = Harness::new();
    let tools = ["trigger-long-running-operation", "echo"];
    let config = discovered(&h, &peer.url(), &tools).await;
    let long = config
        .get("trigger-long-running-operation")
        .expect("binding");
    let mut form = long.to_value();
    form["timeout_seconds"] = json!(1);
    let short = brain_tools_core::Binding::from_value(&form).expect("a 1 s binding");
    let out = call(&h, &short, "c-late", json!({"duration": 30, "steps": 30})).await;
    assert_failure(&out.result, "timeout", true);
    // The cancel and DELETE against the real server finish within their deadlines.
    h.flush().await;
    let echo = config.get("echo").expect("binding");
    let out = call(&h, echo, "c-next", json!({"message": "still here"})).await;
    let text = json!([{"type": "text", "text": "Echo: still here"}]);
    assert_eq!(out.result, success("c-next", text, None));
    h.flush().await;
}
