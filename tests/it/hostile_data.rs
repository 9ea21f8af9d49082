//! Data a hostile or sloppy server sends: numbers beyond f64, lone surrogate escapes,
//! malformed content blocks, and structured results sent twice. Numbers stay exact both
//! ways, lone surrogates become U+FFFD, malformed blocks are the server's protocol error.

use brain_tests::server::{Era, RawReply};
use serde_json::{Value, json};

use brain_tools_core::{Arguments, ContentBlock};

use crate::call_support::{Harness, TENANT, binding, call};
use crate::hostile_support::{answer_calls, call_with_token, hostile, kind, message};

/// Numbers an f64 would change: a 30-digit integer, 2^53 + 1, a 34-digit decimal, one
/// below the smallest f64 and one above the largest.
const EXACT: &[&str] = &[
    "123456789012345678901234567890",
    "9007199254740993",
    "-0.1000000000000000055511151231257827",
    "1e-400",
    "1.5e+400",
];

fn exact_object() -> String {
    object_of(EXACT)
}

/// The numbers an f64's range holds, if not its precision: arguments with a number past
/// that range cannot be checked against a schema unless the `exact-numbers` feature is
/// on, so they are refused before they are sent.
fn exact_object_within_f64() -> String {
    object_of(&EXACT[..4])
}

fn object_of(numbers: &[&str]) -> String {
    let members: Vec<String> = numbers
        .iter()
        .enumerate()
        .map(|(i, n)| format!("\"n{i}\":{n}"))
        .collect();
    format!("{{{}}}", members.join(","))
}

#[tokio::test]
async fn numbers_reach_the_server_digit_for_digit() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = hostile(era, |_| None);
        let h = Harness::new();
        // The model's text, as the host passes it on.
        let args = Arguments::from_json(exact_object_within_f64()).expect("valid JSON");
        let spec = json!({
            "name": "echo", "description": "d", "url": server.url(), "mcp_tool": "echo",
            "tenants": [TENANT],
            "input_schema": {"type": "object", "properties": {
                "n0": {"type": "integer", "maximum": serde_json::from_str::<Value>(EXACT[0]).expect("n")},
                "n1": {"type": "integer", "minimum": 9007199254740993_u64},
            }},
        });
        let out = call(&h, &binding(spec.clone()), "n-1", args).await;
        h.flush().await;
        assert_eq!(
            out.result["error"]["kind"], "rpc_error",
            "echo wants text: {}",
            out.result
        );
        let stats = server.stats();
        let sent = stats
            .received
            .iter()
            .find(|r| r.method.as_deref() == Some("tools/call"))
            .expect("the call reached the server");
        for n in &EXACT[..4] {
            assert!(
                sent.raw_body.contains(&format!(":{n}")),
                "{era:?}: {n} in {}",
                sent.raw_body
            );
        }
        // Validation judges 64-bit integers exactly: 2^53 is below the minimum of
        // 2^53 + 1 (an f64 could not tell them apart). Past 64 bits it judges the nearest
        // f64 (exactly only with the `exact-numbers` feature, tested in brain-tools-core).
        let past = Arguments::from_json(exact_object()).expect("valid JSON");
        let out = call(&h, &binding(spec.clone()), "n-2", past).await;
        assert_eq!(
            out.result["error"]["kind"], "invalid_arguments",
            "{}",
            out.result
        );
        let said = out.result["error"]["message"].as_str().unwrap_or_default();
        assert!(said.contains("past the range of an f64"), "{said}");
        let under = json!({"n1": 9007199254740992_u64});
        let out = call(&h, &binding(spec), "n-3", under).await;
        assert_eq!(
            out.result["error"]["kind"], "invalid_arguments",
            "{}",
            out.result
        );
    }
}

#[tokio::test]
async fn numbers_in_results_come_back_digit_for_digit() {
    for (era, sse) in [(Era::Handshake, false), (Era::Stateless, true)] {
        let result = format!(
            r#"{{"content":[],"structuredContent":{},"resultType":"complete"}}"#,
            exact_object()
        );
        let server = hostile(era, answer_calls(result, sse));
        let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
        assert!(!out.event.is_error, "{:?}", out.event);
        let line = serde_json::to_string(&out.event).expect("JSON");
        for n in EXACT {
            assert!(line.contains(&format!(":{n}")), "{era:?}: {n} in {line}");
        }
        // The text copy Brain adds holds the same digits.
        let Some(ContentBlock::Text { text: copy }) = out.event.content.first() else {
            panic!("a text copy: {line}")
        };
        assert!(copy.contains(EXACT[0]) && copy.contains(EXACT[2]), "{copy}");
    }
}

#[tokio::test]
async fn a_server_request_id_above_2_pow_53_is_answered_with_that_id() {
    let server = hostile(Era::Handshake, |seen| {
        (seen.method() == Some("tools/call")).then(|| {
            let ping = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#;
            let done = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#,
                seen.id_json()
            );
            RawReply {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                body: format!("data: {ping}\n\ndata: {done}\n\n").into_bytes(),
            }
        })
    });
    let out = call_with_token(&server, Some(Era::Handshake), "echo", json!({}), 1_048_576).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let stats = server.stats();
    let answer = stats
        .received
        .iter()
        .find(|r| r.is_response())
        .expect("the ping was answered");
    assert!(
        answer.raw_body.contains(r#""id":9007199254740993"#),
        "{}",
        answer.raw_body
    );
}

#[tokio::test]
async fn lone_surrogates_become_replacement_characters() {
    let lone = r#"{"content":[{"type":"text","text":"cut \ud83d"}],"structuredContent":{"s":"x\udc00y"},"resultType":"complete"}"#;
    for (era, sse) in [
        (Era::Handshake, false),
        (Era::Handshake, true),
        (Era::Stateless, false),
        (Era::Stateless, true),
    ] {
        let server = hostile(era, answer_calls(lone.to_owned(), sse));
        let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
        let what = format!("{era:?} sse={sse}");
        assert_eq!(out.result["is_error"], false, "{what}: {}", out.result);
        assert_eq!(out.result["content"][0]["text"], "cut \u{fffd}", "{what}");
        assert_eq!(
            out.result["structured_content"]["s"], "x\u{fffd}y",
            "{what}"
        );
    }
    // In an error message too.
    let server = hostile(Era::Stateless, |seen| {
        (seen.method() == Some("tools/call")).then(|| {
            RawReply::json(200, format!(r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":"bad \ud83d"}}}}"#, seen.id_json()))
        })
    });
    let out = call_with_token(&server, Some(Era::Stateless), "echo", json!({}), 1_048_576).await;
    assert_eq!(kind(&out), "rpc_error");
    assert!(message(&out).contains("bad \u{fffd}"), "{}", message(&out));
}

#[tokio::test]
async fn malformed_blocks_are_protocol_errors_and_unknown_ones_unsupported() {
    let cases = [
        (r#"{"type":"text"}"#, "protocol_error"),
        (
            r#"{"type":"text","text":{"not":"a string"}}"#,
            "protocol_error",
        ),
        (r#"{"type":"image","data":"aGk="}"#, "protocol_error"),
        (
            r#"{"type":"image","data":"aGk=","mimeType":"text/html"}"#,
            "protocol_error",
        ),
        (
            r#"{"type":"image","data":"aGk=","mimeType":"application/x-msdownload"}"#,
            "protocol_error",
        ),
        (
            r#"{"type":"image","data":"aGk=","mimeType":""}"#,
            "protocol_error",
        ),
        (
            r#"{"type":"image","data":"%%%","mimeType":"image/png"}"#,
            "protocol_error",
        ),
        (r#"{"type":"audio","data":7}"#, "protocol_error"),
        (
            r#"{"type":"audio","data":"aGk=","mimeType":"audio/wav"}"#,
            "unsupported_content",
        ),
        (r#"{"type":"hologram","beam":1}"#, "unsupported_content"),
    ];
    for era in [Era::Handshake, Era::Stateless] {
        for (block, expected) in cases {
            let result = format!(r#"{{"content":[{block}],"resultType":"complete"}}"#);
            let server = hostile(era, answer_calls(result, false));
            let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
            assert_eq!(kind(&out), expected, "{era:?} {block}: {}", message(&out));
            assert_eq!(out.result["unknown_outcome"], true);
        }
    }
}

#[tokio::test]
async fn structured_content_that_is_not_an_object_is_refused_before_2026() {
    for value in ["[1,2,3]", "\"text\"", "42"] {
        let result =
            format!(r#"{{"content":[],"structuredContent":{value},"resultType":"complete"}}"#);
        let server = hostile(Era::Handshake, answer_calls(result.clone(), false));
        let out =
            call_with_token(&server, Some(Era::Handshake), "echo", json!({}), 1_048_576).await;
        assert_eq!(kind(&out), "protocol_error", "{value}: {}", out.result);
        assert!(
            message(&out).contains("not a JSON object"),
            "{}",
            message(&out)
        );
        // 2026-07-28 allows any JSON value as structured content.
        let server = hostile(Era::Stateless, answer_calls(result, false));
        let out =
            call_with_token(&server, Some(Era::Stateless), "echo", json!({}), 1_048_576).await;
        assert_eq!(out.result["is_error"], false, "{value}: {}", out.result);
        assert_eq!(
            out.result["structured_content"],
            serde_json::from_str::<Value>(value).expect("json")
        );
    }
}

#[tokio::test]
async fn a_structured_result_under_the_limit_passes_with_its_text_copy() {
    let value = json!({"rows": "r".repeat(600_000)});
    let copy = Value::String(value.to_string()).to_string();
    let result = format!(
        r#"{{"content":[{{"type":"text","text":{copy}}}],"structuredContent":{value},"resultType":"complete"}}"#
    );
    for (era, sse) in [
        (Era::Handshake, false),
        (Era::Handshake, true),
        (Era::Stateless, false),
        (Era::Stateless, true),
    ] {
        let server = hostile(era, answer_calls(result.clone(), sse));
        let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
        assert_eq!(out.result["is_error"], false, "{era:?}: {}", message(&out));
        assert_eq!(
            out.result["content"].as_array().map(Vec::len),
            Some(1),
            "not doubled"
        );
        // Over the limit it still fails: 600 KB is more than 500 KB.
        let out = call_with_token(&server, Some(era), "echo", json!({}), 500_000).await;
        assert_eq!(kind(&out), "output_too_large", "{era:?}");
    }
}
