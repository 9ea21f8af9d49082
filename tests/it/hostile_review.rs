//! What a red-team review of the hostile-server rules found, each kept as a test: tokens
//! behind JSON escapes, partly percent-encoded or spelled by a loader's error path; error
//! text inflated by escaping; "copies" of structured content that cost nothing; names
//! that load but TLS refuses; invisible characters on stderr.

use brain_mcp_bind::cmd::{EXIT_FAILED, EXIT_USAGE};
use brain_tests::server::{Era, RawReply};
use serde_json::json;

use crate::call_support::TENANT;
use crate::discover_support::mcp_tools;
use crate::hostile_support::{
    TOKEN, answer_calls, assert_no_token, call_with_token, hostile, kind, message, printed,
};

const ERAS: [Era; 2] = [Era::Handshake, Era::Stateless];

/// `s` with JSON's `\uXXXX` escapes and `\/` decoded, as a reader (or a model) would.
fn unescaped(s: &str) -> String {
    serde_json::from_str::<String>(&format!("\"{}\"", s.replace('"', "\\\"")))
        .unwrap_or_else(|_| s.replace("\\/", "/"))
}

#[tokio::test]
async fn a_token_behind_json_escapes_in_error_data_is_redacted() {
    // How PHP and .NET encoders write `sk-Live/Zq9x+Hostile=42`.
    let escaped = TOKEN.replace('/', "\\/").replace('+', "\\u002B");
    for era in ERAS {
        for method in ["tools/call", "initialize"] {
            if era == Era::Stateless && method == "initialize" {
                continue;
            }
            let data = format!(r#"{{"authorization":"Bearer {escaped}"}}"#);
            let server = hostile(era, move |seen| {
                (seen.method() == Some(method)).then(|| {
                    RawReply::rpc_error(200, &seen.id_json(), -32001, "bad key", Some(&data))
                })
            });
            let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
            let text = message(&out);
            assert!(text.contains("[redacted]"), "{era:?} {method}: {text}");
            assert!(
                !unescaped(&text).contains(TOKEN),
                "{era:?} {method}: {text}"
            );
            assert_no_token(TOKEN, &text, method);
        }
    }
}

#[tokio::test]
async fn a_partly_percent_encoded_token_is_redacted() {
    for encoded in ["sk-Live/Zq9x%2BHostile%3D42", "sk-Live%2FZq9x+Hostile=42"] {
        for era in ERAS {
            let text = format!("rejected ?t={encoded}&x=1");
            let server = hostile(era, move |seen| {
                (seen.method() == Some("tools/call"))
                    .then(|| RawReply::rpc_error(200, &seen.id_json(), -32001, &text, None))
            });
            let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
            assert!(
                message(&out).contains("?t=[redacted]&x=1"),
                "{encoded}: {}",
                message(&out)
            );
        }
    }
}

#[test]
fn a_token_spelled_by_a_loader_error_path_is_redacted() {
    // The token names a key hidden from the scrubber behind a duplicated member, and a
    // duplicate inside it makes the loader's error path run through that key.
    let token = std::env::var("CARGO_PKG_NAME").expect("cargo sets it");
    let tok = token.clone();
    let server = hostile(Era::Handshake, move |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let schema = format!(
                r#"{{"type":"object","properties":{{"{tok}":{{"a":1,"a":2}}}},"properties":{{}}}}"#
            );
            RawReply::result(
                &seen.id_json(),
                &format!(r#"{{"tools":[{{"name":"search","inputSchema":{schema}}}]}}"#),
            )
        })
    });
    let url = server.url();
    let r = mcp_tools(&[
        "-url",
        &url,
        "-tenant",
        TENANT,
        "-tools",
        "search",
        "-token-env",
        "CARGO_PKG_NAME",
    ]);
    assert_eq!(r.code, EXIT_FAILED, "{r:?}");
    assert!(r.stderr.contains("duplicate field"), "{r:?}");
    assert_no_token(&token, &r.stderr, "mcp-tools stderr");
}

#[test]
fn one_mcp_tools_failure_line_stays_bounded() {
    let key = "k".repeat(200_000);
    let server = hostile(Era::Handshake, move |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let schema = format!(r#"{{"type":"object","properties":{{"{key}":{{"a":1,"a":2}}}}}}"#);
            RawReply::result(
                &seen.id_json(),
                &format!(r#"{{"tools":[{{"name":"search","inputSchema":{schema}}}]}}"#),
            )
        })
    });
    let r = mcp_tools(&["-url", &server.url(), "-tenant", TENANT, "-tools", "search"]);
    assert_eq!(r.code, EXIT_FAILED);
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(r.stderr.len() < 6_000, "{} bytes", r.stderr.len());
}

#[tokio::test]
async fn control_characters_do_not_inflate_a_failed_result_line() {
    let controls = "\u{1}".repeat(3_000);
    for era in ERAS {
        let text = controls.clone();
        let server = hostile(era, move |seen| {
            (seen.method() == Some("tools/call"))
                .then(|| RawReply::rpc_error(500, &seen.id_json(), -32603, &text, None))
        });
        let out = call_with_token(&server, Some(era), "echo", json!({}), 1_048_576).await;
        assert_eq!(kind(&out), "rpc_error");
        let line = out.result.to_string();
        assert!(line.len() < 5_000, "{era:?}: {} bytes", line.len());
    }
}

#[tokio::test]
async fn a_padded_or_duplicate_key_copy_of_structured_content_is_counted() {
    let padded = format!("{{\"a\":1}}{}", " ".repeat(200_000));
    let duplicate = format!("{{\"a\":\"{}\",\"a\":1}}", "x".repeat(200_000));
    for era in ERAS {
        for text in [&padded, &duplicate] {
            let result = json!({"content": [{"type": "text", "text": text}],
                "structuredContent": {"a": 1}, "resultType": "complete"})
            .to_string();
            let server = hostile(era, answer_calls(result, false));
            let out = call_with_token(&server, Some(era), "echo", json!({}), 100_000).await;
            assert_eq!(
                kind(&out),
                "output_too_large",
                "{era:?}: {}",
                out.result.to_string().len()
            );
        }
    }
}

#[tokio::test]
async fn a_structured_array_and_its_text_are_counted_once_and_copied_once() {
    let value = json!(["r".repeat(300_000)]);
    let result = json!({"content": [{"type": "text", "text": value.to_string()}],
        "structuredContent": value, "resultType": "complete"})
    .to_string();
    let server = hostile(Era::Stateless, answer_calls(result, false));
    let out = call_with_token(&server, Some(Era::Stateless), "echo", json!({}), 500_000).await;
    assert_eq!(out.result["is_error"], false, "{}", message(&out));
    assert_eq!(out.result["content"].as_array().map(Vec::len), Some(1));
    assert_no_token(TOKEN, &printed(&out), "result");
}

#[test]
fn https_hosts_tls_would_refuse_are_refused_at_load() {
    for url in [
        "https://127.1:9/mcp",
        "https://10.1.2:9/mcp",
        "https://localhost.0x7f:9/mcp",
        "https://x-.localhost:9/mcp",
        "https://a.b.123:9/mcp",
    ] {
        let r = mcp_tools(&["-url", url, "-tenant", TENANT, "-tools", "echo"]);
        assert_eq!(r.code, EXIT_USAGE, "{url}: {r:?}");
        assert!(r.stderr.contains("must have a valid host"), "{url}: {r:?}");
    }
}

#[test]
fn invisible_characters_on_stderr_are_escaped() {
    let server = hostile(Era::Handshake, |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            RawReply::rpc_error(
                500,
                &seen.id_json(),
                -32603,
                "ok\u{61c}\u{e0068}\u{e0069}\u{200b} done",
                None,
            )
        })
    });
    let r = mcp_tools(&["-url", &server.url(), "-tenant", TENANT, "-tools", "echo"]);
    assert_eq!(r.code, EXIT_FAILED);
    assert!(
        r.stderr
            .contains("ok\\u{61c}\\u{e0068}\\u{e0069}\\u{200b} done"),
        "{r:?}"
    );
}
