use std::time::Duration;

use super::{identity, json, msg};
use crate::client::era::{self, Era, ProbeAnswer, Retry, Verdict};
use crate::client::{Expect, RpcError};
use crate::jsonrpc::{ErrorCode, RequestId};
use crate::version::ProtocolVersion;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn message(text: &str) -> Verdict {
    era::verdict(ProbeAnswer::Message(&msg(text)))
}

fn status(status: u16, rpc: Option<&RpcError>) -> Verdict {
    era::verdict(ProbeAnswer::Status {
        status,
        rpc,
        challenge: None,
        retry_after: None,
    })
}

#[test]
fn the_probe_is_a_2026_server_discover() {
    let out = era::probe(RequestId::Number(4), &identity());
    let body = json(&out.body);
    assert_eq!(body["method"], "server/discover");
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
        "brain-test"
    );
    assert!(
        out.idempotent,
        "no side effect: may be resent on a stale connection"
    );
    assert_eq!(out.expect, Expect::Response(RequestId::Number(4)));
    let names: Vec<&str> = out.headers.iter().map(|h| h.name.as_ref()).collect();
    assert_eq!(names, ["mcp-protocol-version", "mcp-method"]);
}

#[test]
fn definite_answers_decide_the_era() {
    let discover = |versions: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"supportedVersions":{versions},"capabilities":{{}},"resultType":"complete","ttlMs":0,"cacheScope":"public"}}}}"#
        )
    };
    assert_eq!(
        message(&discover(r#"["2025-11-25","2026-07-28"]"#)),
        Verdict::Speaks(Era::Stateless(V2026))
    );
    assert_eq!(
        message(&discover(r#"["2025-11-25"]"#)),
        Verdict::Speaks(Era::Handshake)
    );
    assert_eq!(
        message(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        Verdict::Speaks(Era::Handshake)
    );
    let stale = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}"#;
    assert_eq!(message(stale), Verdict::Speaks(Era::Stateless(V2026)));
    let old = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2025-06-18"]}}}"#;
    assert_eq!(message(old), Verdict::Speaks(Era::Handshake));
    assert_eq!(
        message(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"?"}}"#),
        Verdict::Speaks(Era::Handshake)
    );
    assert_eq!(
        era::verdict(ProbeAnswer::NotAnAnswer),
        Verdict::Speaks(Era::Handshake)
    );
}

#[test]
fn error_statuses_with_and_without_json_rpc() {
    // The same -32022 reads the same whether it came in a 200 or with a 400.
    let error = RpcError::from_body(
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#,
    )
    .unwrap();
    assert_eq!(
        status(400, Some(&error)),
        Verdict::Speaks(Era::Stateless(V2026))
    );
    let no_session = RpcError::new(
        ErrorCode(-32000),
        "Bad Request: No valid session ID provided",
    );
    assert_eq!(
        status(400, Some(&no_session)),
        Verdict::Speaks(Era::Handshake)
    );
    for plain in [400, 404, 405, 406] {
        assert_eq!(
            status(plain, None),
            Verdict::Speaks(Era::Handshake),
            "{plain}"
        );
    }
    let refused = era::verdict(ProbeAnswer::Status {
        status: 401,
        rpc: None,
        challenge: Some("Bearer realm=\"x\""),
        retry_after: None,
    });
    assert_eq!(
        refused,
        Verdict::Unauthorized {
            status: 401,
            challenge: Some("Bearer realm=\"x\"".into())
        }
    );
    assert!(matches!(
        status(403, None),
        Verdict::Unauthorized { status: 403, .. }
    ));
}

#[test]
fn over_a_child_silence_and_an_early_end_mean_the_handshake_and_unusable_is_final() {
    // Some stdio servers quit on a first message other than initialize, some ignore it.
    assert_eq!(
        era::verdict(ProbeAnswer::Ended),
        Verdict::Speaks(Era::Handshake)
    );
    assert_eq!(
        era::verdict(ProbeAnswer::Silent),
        Verdict::Speaks(Era::Handshake)
    );
    // A request that cannot be sent as configured is not retried.
    assert_eq!(era::verdict(ProbeAnswer::Unusable), Verdict::Refused);
}

#[test]
fn not_now_and_no_answer_are_transient() {
    for code in [408, 429, 500, 502, 503, 504] {
        let verdict = era::verdict(ProbeAnswer::Status {
            status: code,
            rpc: None,
            challenge: None,
            retry_after: Some(Duration::from_secs(2)),
        });
        assert_eq!(
            verdict,
            Verdict::Transient {
                status: Some(code),
                retry_after: Some(Duration::from_secs(2)),
            }
        );
    }
    assert_eq!(
        era::verdict(ProbeAnswer::NoAnswer),
        Verdict::Transient {
            status: None,
            retry_after: None
        }
    );
}

#[test]
fn retries_back_off_honour_retry_after_and_stop() {
    let plenty = Duration::from_secs(60);
    let mut retry = Retry::default();
    assert_eq!(
        retry.next_wait(None, plenty),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry.next_wait(None, plenty),
        Some(Duration::from_millis(500))
    );
    assert_eq!(
        retry.next_wait(Some(Duration::from_secs(3)), plenty),
        Some(Duration::from_secs(3))
    );
    assert_eq!(retry.next_wait(None, plenty), None, "attempts spent");
    // A wait that would not end before the deadline is not started.
    let mut retry = Retry::default();
    assert_eq!(
        retry.next_wait(Some(Duration::from_secs(30)), Duration::from_secs(5)),
        None
    );
    assert_eq!(retry.attempts(), 1);
}
