use super::{identity, json, msg};
use crate::client::handshake::{self, HandshakeError};
use crate::client::listing::{Exchange, Step};
use crate::client::{CallError, Expect, Framing, RpcError};
use crate::jsonrpc::{ErrorCode, RequestId};
use crate::version::ProtocolVersion;

/// What a driver does with the answer to `initialize` (id 1): the exchange reads it, then
/// the handshake negotiates from its result.
fn opened(text: &str, session: Option<String>) -> Result<Framing, HandshakeError> {
    let exchange = Exchange::new(Framing::before_session());
    match exchange.handle(&RequestId::Number(1), msg(text)) {
        Step::Done(Ok(result)) => handshake::negotiated(&result, session),
        Step::Done(Err(CallError::Rpc { error, .. })) => Err(HandshakeError::Refused(error)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn initialize_offers_the_newest_handshake_version_and_is_not_resent() {
    let out = handshake::initialize(RequestId::Number(1), &identity());
    let body = json(&out.body);
    assert_eq!(body["method"], "initialize");
    assert_eq!(body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(body["params"]["capabilities"], serde_json::json!({}));
    assert!(
        !out.idempotent,
        "a resent initialize could open a session nobody closes"
    );
    assert!(out.headers.is_empty(), "no session, no version yet");
    assert_eq!(out.resume_attempts, 2);
}

#[test]
fn initialize_carries_the_identity_as_the_typed_params_would() {
    use crate::mcp::{ClientCapabilities, Implementation, InitializeParams};
    let info: Implementation = serde_json::from_value(
        serde_json::json!({"name": "brain", "version": "1.2", "title": "B\u{2028}"}),
    )
    .unwrap();
    let capabilities: ClientCapabilities =
        serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}, "roots": {}}))
            .unwrap();
    let identity =
        crate::client::Identity::new(info.clone()).with_capabilities(capabilities.clone());
    let out = handshake::initialize(RequestId::Number(7), &identity);
    let typed = InitializeParams {
        protocol_version: handshake::OFFERED.as_str().to_owned(),
        capabilities,
        client_info: info,
        meta: None,
        extra: serde_json::Map::new(),
    };
    let expected =
        crate::jsonrpc::encode_request(&RequestId::Number(7), "initialize", &typed).unwrap();
    assert_eq!(json(&out.body), json(&expected));
    // Written once with the identity, it is byte for byte what writing it per session
    // gave, for any id.
    for id in [
        RequestId::Number(0),
        RequestId::Number(-12),
        RequestId::Number(i64::MAX),
        RequestId::String("a\"b\u{2028}".into()),
    ] {
        let out = handshake::initialize(id.clone(), &identity);
        #[derive(serde::Serialize)]
        struct Params<'a> {
            #[serde(rename = "protocolVersion")]
            version: &'a str,
            capabilities: &'a serde_json::value::RawValue,
            #[serde(rename = "clientInfo")]
            info: &'a serde_json::value::RawValue,
        }
        let capabilities = serde_json::value::to_raw_value(identity.capabilities()).unwrap();
        let params = Params {
            version: handshake::OFFERED.as_str(),
            capabilities: &capabilities,
            info: identity.info_json(),
        };
        let whole = crate::jsonrpc::encode_request(&id, "initialize", &params).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.body),
            String::from_utf8_lossy(&whole)
        );
    }
}

#[test]
fn the_answer_opens_a_session_at_the_negotiated_version() {
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    let session = opened(ok, Some("sid-1".into())).unwrap();
    assert_eq!(
        session,
        Framing::Handshake {
            session: Some("sid-1".into()),
            version: Some(ProtocolVersion::V2025_06_18)
        }
    );
    let headers = session.headers(
        "tools/call",
        Some("ignored"),
        vec![("Mcp-Param-X".into(), "1".into())],
    );
    let shown: Vec<String> = headers.iter().map(|h| format!("{h:?}")).collect();
    assert_eq!(
        shown,
        ["mcp-session-id: ***", "mcp-protocol-version: 2025-06-18"]
    );
    // What the handshake does not read may hold anything: members it does not know,
    // capabilities of any content.
    let open = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":"yes"},"x":[1]},"serverInfo":{"name":"s","version":"1","icons":7},"instructions":"hi","more":{}}}"#;
    assert!(opened(open, None).is_ok());
    let init = handshake::initialized(&session);
    assert_eq!(json(&init.body)["method"], "notifications/initialized");
    assert_eq!(init.expect, Expect::Accepted);

    let refused =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"down","data":{"why":1}}}"#;
    let err = opened(refused, None).unwrap_err();
    let HandshakeError::Refused(error) = err else {
        panic!("{err:?}")
    };
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(error.data_text(), Some(r#"{"why":1}"#));
    assert_eq!(
        error,
        RpcError::from_body(refused.as_bytes()).unwrap(),
        "one reading of an error"
    );

    for bad in [
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        // The members every result has are required, in their shape.
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":[],"serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
    ] {
        assert!(
            matches!(opened(bad, None), Err(HandshakeError::Protocol(_))),
            "{bad}"
        );
    }
}

#[test]
fn closing_and_cancelling() {
    let session = Framing::Handshake {
        session: Some("sid".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    };
    let headers = handshake::close(&session).unwrap();
    assert_eq!(headers.len(), 2);
    assert!(
        handshake::close(&Framing::Handshake {
            session: None,
            version: None
        })
        .is_none()
    );
    for status in [200, 204, 404, 405] {
        assert!(handshake::closed(status), "{status}");
    }
    assert!(!handshake::closed(500));
    assert!(handshake::expired(&session, 404));
    assert!(!handshake::expired(
        &Framing::Stateless(ProtocolVersion::V2026_07_28),
        404
    ));

    let cancel = handshake::cancel(&session, RequestId::Number(9), "why").unwrap();
    let body = json(&cancel.body);
    assert_eq!(body["method"], "notifications/cancelled");
    assert_eq!(body["params"]["requestId"], 9);
    assert!(
        handshake::cancel(
            &Framing::Stateless(ProtocolVersion::V2026_07_28),
            RequestId::Number(9),
            "why"
        )
        .is_none()
    );
}
