use serde_json::json;

use super::{json as parse, msg};
use crate::client::Framing;
use crate::client::stdio::{self, Route};
use crate::jsonrpc::RequestId;
use crate::version::ProtocolVersion;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn route(text: &str) -> Route {
    stdio::route(&msg(text))
}

#[test]
fn lines_are_routed_by_id_and_progress_token() {
    assert_eq!(
        route(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#),
        Route::Response(RequestId::Number(4))
    );
    assert_eq!(
        route(r#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}"#),
        Route::Response(RequestId::from("a"))
    );
    assert_eq!(
        route(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
        Route::Orphan
    );
    assert_eq!(
        route(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"call-1","progress":1}}"#
        ),
        Route::Progress(RequestId::from("call-1"))
    );
    assert_eq!(
        route(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Route::Request
    );
    for other in [
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
    ] {
        assert_eq!(route(other), Route::Other, "{other}");
    }
}

#[test]
fn a_request_that_belongs_to_no_call_is_answered_or_refused() {
    let framing = Framing::Stateless(V2026);
    let ping = stdio::unattributed(
        &framing,
        &msg(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#),
    )
    .expect("a ping is answered");
    assert_eq!(
        parse(&ping.body),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}})
    );
    let ask = stdio::unattributed(
        &framing,
        &msg(r#"{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{}}"#),
    )
    .expect("an input request is refused");
    let sent = parse(&ask.body);
    assert_eq!(sent["id"], "e");
    assert_eq!(sent["error"]["code"], -32601);
    assert!(
        stdio::unattributed(
            &framing,
            &msg(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#)
        )
        .is_none()
    );
}
