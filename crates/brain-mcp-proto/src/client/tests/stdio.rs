use serde_json::{Map, Value, json};

use super::{identity, json as parse};
use crate::client::era::Verdict;
use crate::client::stdio::{self, ProbeReply, Route};
use crate::client::{Call, CallRequest, Era, Framing};
use crate::jsonrpc::RequestId;
use crate::version::ProtocolVersion;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn call(framing: Framing) -> Call {
    let args: &'static Map<String, Value> = Box::leak(Box::new(Map::new()));
    let request = CallRequest::new("echo", args, RequestId::from("call-1"));
    Call::start(framing, RequestId::Number(9), &request, &identity()).0
}

#[test]
fn a_probe_answer_reads_as_over_http_and_silence_means_the_handshake() {
    let found = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
    assert_eq!(
        stdio::verdict(ProbeReply::Message(found)),
        Verdict::Speaks(Era::Stateless(V2026))
    );
    let unknown =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    assert_eq!(
        stdio::verdict(ProbeReply::Message(unknown)),
        Verdict::Speaks(Era::Handshake)
    );
    // A child that quits on a first message other than initialize, or ignores it.
    assert_eq!(
        stdio::verdict(ProbeReply::Ended),
        Verdict::Speaks(Era::Handshake)
    );
    assert_eq!(
        stdio::verdict(ProbeReply::Silent),
        Verdict::Speaks(Era::Handshake)
    );
}

#[test]
fn an_abandoned_call_is_cancelled_by_notification_in_both_eras() {
    let handshake = Framing::Handshake {
        session: None,
        version: Some(ProtocolVersion::V2025_11_25),
    };
    for framing in [handshake, Framing::Stateless(V2026)] {
        let mut c = call(framing.clone());
        let out = stdio::cancel(&c).expect("a cancel while the call runs");
        let sent = parse(&out.body);
        assert_eq!(sent["method"], "notifications/cancelled", "{framing:?}");
        assert_eq!(sent["params"]["requestId"], 9, "{framing:?}");
        assert!(sent.get("id").is_none(), "a notification");
        // Once the call has its outcome there is nothing to cancel.
        c.handle_response(r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#);
        assert!(stdio::cancel(&c).is_none());
    }
    // Over HTTP the 2026 era cancels by closing the stream: the core's HTTP rule differs.
    assert!(call(Framing::Stateless(V2026)).cancel().is_none());
}

#[test]
fn lines_are_routed_by_id_and_progress_token() {
    assert_eq!(
        stdio::route(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#),
        Route::Response(RequestId::Number(4))
    );
    assert_eq!(
        stdio::route(r#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}"#),
        Route::Response(RequestId::from("a"))
    );
    assert_eq!(
        stdio::route(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
        Route::Orphan
    );
    assert_eq!(
        stdio::route(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"call-1","progress":1}}"#
        ),
        Route::Progress(RequestId::from("call-1"))
    );
    assert_eq!(
        stdio::route(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Route::Request
    );
    for other in [
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        "not json",
        r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
    ] {
        assert_eq!(stdio::route(other), Route::Other, "{other}");
    }
}

#[test]
fn a_request_that_belongs_to_no_call_is_answered_or_refused() {
    let framing = Framing::Stateless(V2026);
    let ping = stdio::unattributed(&framing, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
        .expect("a ping is answered");
    assert_eq!(
        parse(&ping.body),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}})
    );
    let ask = stdio::unattributed(
        &framing,
        r#"{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{}}"#,
    )
    .expect("an input request is refused");
    let sent = parse(&ask.body);
    assert_eq!(sent["id"], "e");
    assert_eq!(sent["error"]["code"], -32601);
    assert!(
        stdio::unattributed(&framing, r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_none()
    );
}
