//! A server that reflects the bearer token back, wherever it can: in a challenge, in
//! JSON-RPC error messages and data, in a redirect's host name, in results and progress.
//! The token never reaches the result event, and error text stays small.

use brain_tests::server::{Era, RawReply};
use serde_json::json;

use crate::hostile_support::{
    TOKEN, assert_no_token, call_with_this_token, call_with_token, hostile, kind, message, printed,
    token_forms,
};

/// The token in every form a server might reflect it, in one string.
fn reflection() -> String {
    token_forms(TOKEN).join(" | ")
}

/// Bytes a failed call's whole result line may take, whatever the server sent.
const SMALL_LINE: usize = 5_000;

fn assert_small(out: &crate::call_support::Outcome, what: &str) {
    let line = out.result.to_string();
    assert!(line.len() < SMALL_LINE, "{what}: {} bytes", line.len());
}

#[tokio::test]
async fn a_challenge_reflecting_the_token_is_redacted_and_cut() {
    // Where the refusal lands: the era probe, `initialize`, or the call itself.
    for era in [None, Some(Era::Handshake), Some(Era::Stateless)] {
        for status in [401, 403] {
            let challenge = format!(
                "Bearer realm=\"mcp\", error=\"invalid_token\", error_description=\"{}\" {}",
                reflection(),
                "p".repeat(300_000)
            );
            let server = hostile(era.unwrap_or(Era::Both), move |_| {
                Some(RawReply::json(status, "{}").header("www-authenticate", &challenge))
            });
            let out = call_with_token(&server, era, "echo", json!({}), 1_048_576).await;
            let what = format!("{status} at {era:?}");
            assert_eq!(kind(&out), "authorization_failed", "{what}: {}", out.result);
            assert_eq!(out.result["unknown_outcome"], false, "{what}");
            assert!(
                message(&out).contains("[redacted]"),
                "{what}: {}",
                message(&out)
            );
            assert_no_token(TOKEN, &printed(&out), &what);
            assert_small(&out, &what);
        }
    }
}

#[tokio::test]
async fn json_rpc_errors_reflecting_the_token_are_redacted_and_cut() {
    // (era the client knows, method answered with the error, HTTP status, padding, kind)
    let cases = [
        (
            Era::Handshake,
            "initialize",
            200,
            7_300_000,
            "handshake_failed",
        ),
        (
            Era::Handshake,
            "initialize",
            500,
            60_000,
            "handshake_failed",
        ),
        (Era::Handshake, "tools/call", 200, 61_000, "rpc_error"),
        (Era::Handshake, "tools/call", 500, 60_000, "rpc_error"),
        (Era::Stateless, "tools/call", 200, 61_000, "rpc_error"),
        (Era::Stateless, "tools/call", 400, 60_000, "rpc_error"),
        (Era::Stateless, "tools/call", 500, 60_000, "rpc_error"),
    ];
    for (era, method, status, pad, expected) in cases {
        let text = format!("invalid token: {} {}", reflection(), "m".repeat(pad));
        let data = json!({"token": TOKEN, "again": reflection()}).to_string();
        let server = hostile(era, move |seen| {
            (seen.method() == Some(method))
                .then(|| RawReply::rpc_error(status, &seen.id_json(), -32001, &text, Some(&data)))
        });
        let out = call_with_token(&server, Some(era), "echo", json!({"text": "x"}), 1_000).await;
        let what = format!("{method} {status} in {era:?}");
        assert_eq!(kind(&out), expected, "{what}: {}", message(&out));
        assert!(
            message(&out).contains("-32001"),
            "{what}: {}",
            message(&out)
        );
        assert!(message(&out).contains("[redacted]"), "{what}");
        assert_no_token(TOKEN, &printed(&out), &what);
        assert_small(&out, &what);
        let stats = server.stats();
        assert_eq!(
            stats.sessions_opened.len(),
            stats.sessions_deleted.len(),
            "{what}: sessions are closed"
        );
    }
}

#[tokio::test]
async fn a_redirect_to_a_host_named_after_the_token_is_refused_without_showing_it() {
    // A token that can be a host name label, reflected lower-cased as hosts are.
    let token = "Zq9xHostileLabel42";
    for era in [None, Some(Era::Handshake), Some(Era::Stateless)] {
        let port_holder = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
        let port = port_holder.clone();
        let server = hostile(era.unwrap_or(Era::Both), move |seen| {
            (seen.http_method == "POST").then(|| {
                let location = format!(
                    "http://{}.localhost:{}/mcp?k={}",
                    token.to_ascii_lowercase(),
                    port.get().copied().unwrap_or(1),
                    token
                );
                RawReply::json(307, "").header("location", &location)
            })
        });
        let _ = port_holder.set(server.addr().port());
        let out =
            call_with_this_token(&server, era, "echo", json!({"text": "x"}), 1_048_576, token)
                .await;
        let what = format!("redirect at {era:?}");
        assert_eq!(out.result["is_error"], true, "{what}");
        let text = message(&out);
        assert!(
            text.contains("another origin (http://[redacted].localhost"),
            "{what}: {text}"
        );
        assert_no_token(token, &printed(&out), &what);
    }
}

#[tokio::test]
async fn results_and_progress_reflecting_the_token_are_redacted() {
    for era in [Era::Handshake, Era::Stateless] {
        let reflected = reflection();
        let server = hostile(era, move |seen| {
            (seen.tool() == Some("echo")).then(|| {
                let token = seen
                    .body
                    .pointer("/params/_meta/progressToken")
                    .cloned()
                    .unwrap_or_default();
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1,
                        "message": format!("using {reflected}")}});
                let result = json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
                    "content": [{"type": "text", "text": format!("your key is {reflected}")}],
                    "structuredContent": {TOKEN: [reflected.clone()], "ok": true},
                    "resultType": "complete",
                }});
                RawReply {
                    status: 200,
                    headers: vec![("content-type".into(), "text/event-stream".into())],
                    body: format!("data: {progress}\n\ndata: {result}\n\n").into_bytes(),
                }
            })
        });
        let out =
            call_with_token(&server, Some(era), "echo", json!({"text": "x"}), 1_048_576).await;
        let what = format!("result in {era:?}");
        assert_eq!(out.result["is_error"], false, "{what}: {}", out.result);
        assert_eq!(out.progress.len(), 1, "{what}");
        let all = printed(&out);
        assert!(all.contains("[redacted]"), "{what}: {all}");
        assert_no_token(TOKEN, &all, &what);
        assert_eq!(out.result["structured_content"]["ok"], true, "{what}");
    }
}

#[tokio::test]
async fn other_server_strings_reflecting_the_token_are_redacted() {
    // Plain letters and digits, so it fits in a media type too.
    let token = "Zq9xHostileLabel42";
    let lower = token.to_ascii_lowercase();
    // A content type, a result type and a 2026-era server request named after the token.
    for (era, answer) in [
        (Era::Stateless, "content-type"),
        (Era::Stateless, "result-type"),
        (Era::Stateless, "request"),
        (Era::Handshake, "protocol-version"),
    ] {
        let lower = lower.clone();
        let server = hostile(era, move |seen| {
            let id = seen.id_json();
            match (answer, seen.method()) {
                ("content-type", Some("tools/call")) => Some(RawReply {
                    status: 200,
                    headers: vec![("content-type".into(), format!("application/{lower}"))],
                    body: b"{}".to_vec(),
                }),
                ("result-type", Some("tools/call")) => Some(RawReply::result(
                    &id,
                    &json!({"resultType": token, "content": []}).to_string(),
                )),
                ("request", Some("tools/call")) => Some(RawReply::sse(
                    &json!({"jsonrpc": "2.0", "id": 7, "method": token}).to_string(),
                )),
                ("protocol-version", Some("initialize")) => Some(RawReply::result(
                    &id,
                    &json!({"protocolVersion": token, "capabilities": {},
                        "serverInfo": {"name": "h", "version": "1"}})
                    .to_string(),
                )),
                _ => None,
            }
        });
        let out = call_with_this_token(
            &server,
            Some(era),
            "echo",
            json!({"text": "x"}),
            1_048_576,
            token,
        )
        .await;
        assert_eq!(out.result["is_error"], true, "{answer}: {}", out.result);
        assert!(
            message(&out).contains("[redacted]"),
            "{answer}: {}",
            message(&out)
        );
        assert_no_token(token, &printed(&out), answer);
    }
}
