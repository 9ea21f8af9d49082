//! Calls against the Rust SDK (`rmcp`) server, which serves both eras on one endpoint.

use brain_mcp_bind::Era;
use brain_tests::peers::{Peer, PeerKind};
use serde_json::{Value, json};

use crate::call_support::{Harness, call, discovered, progress, success, tool_error};

#[tokio::test]
async fn stateless_era_by_detection() {
    let peer = Peer::start(PeerKind::Rmcp).expect("start the rmcp server");
    let h = Harness::new();
    echo_add_progress_and_fail(&h, &peer.url()).await;
    assert!(
        matches!(h.client.era(&peer.url()), Some(Era::Stateless(_))),
        "detected {:?}",
        h.client.era(&peer.url())
    );
}

#[tokio::test]
async fn handshake_era_when_forced() {
    let peer = Peer::start(PeerKind::Rmcp).expect("start the rmcp server");
    let h = Harness::new();
    h.client.set_era(&peer.url(), Era::Handshake);
    echo_add_progress_and_fail(&h, &peer.url()).await;
    assert_eq!(h.client.era(&peer.url()), Some(Era::Handshake));
}

async fn echo_add_progress_and_fail(h: &Harness, url: &str) {
    let config = discovered(h, url, &["echo", "add", "progress", "fail"]).await;
    let get = |name: &str| config.get(name).expect("a discovered binding").clone();

    let out = call(h, &get("echo"), "r-echo", json!({"text": "from brain"})).await;
    let text = json!([{"type": "text", "text": "from brain"}]);
    assert_eq!(out.result, success("r-echo", text, None));

    let add = get("add");
    assert!(
        add.output_schema().is_some(),
        "add declares an output schema"
    );
    let out = call(h, &add, "r-add", json!({"a": 20, "b": 22})).await;
    let content = out.result["content"].as_array().expect("content").clone();
    assert_eq!(content.len(), 1, "exactly one text block: {}", out.result);
    let text = content[0]["text"].as_str().expect("a text block");
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("JSON text"),
        json!({"sum": 42})
    );
    assert_eq!(
        out.result,
        success("r-add", json!(content), Some(json!({"sum": 42})))
    );

    let out = call(h, &get("progress"), "r-progress", json!({"steps": 4})).await;
    // rmcp writes progress as floats (`1.0`); Brain passes numbers on as written.
    let number = |text: &str| serde_json::from_str::<Value>(text).expect("a number");
    let expected: Vec<Value> = (1..=4)
        .map(|i| {
            let mut event = progress("r-progress", i, None, Some(&format!("step {i} of 4")));
            event["progress"] = number(&format!("{i}.0"));
            event["total"] = number("4.0");
            event
        })
        .collect();
    assert_eq!(out.progress, expected);
    let text = json!([{"type": "text", "text": "done after 4 steps"}]);
    assert_eq!(out.result, success("r-progress", text, None));

    let out = call(h, &get("fail"), "r-fail", json!({})).await;
    let text = json!([{"type": "text", "text": "this tool always fails"}]);
    assert_eq!(out.result, tool_error("r-fail", text));
    h.flush().await;
}
