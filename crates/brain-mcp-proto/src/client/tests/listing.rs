use super::{identity, json, msg};
use crate::client::listing::{self, Exchange, Step};
use crate::client::{CallError, Framing, RpcError, Violation};
use crate::jsonrpc::RequestId;
use crate::version::ProtocolVersion;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

#[test]
fn a_page_request_per_era() {
    let out = listing::request(
        &Framing::Stateless(V2026),
        RequestId::Number(3),
        Some("c2".into()),
        &identity(),
    );
    let body = json(&out.body);
    assert_eq!(body["params"]["cursor"], "c2");
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(out.idempotent);
    let session = Framing::Handshake {
        session: Some("s".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    };
    let out = listing::request(&session, RequestId::Number(4), None, &identity());
    assert!(
        json(&out.body)
            .get("params")
            .is_none_or(|p| p.get("_meta").is_none())
    );
}

#[test]
fn server_requests_follow_the_same_rules_as_in_a_call() {
    let session = Exchange::new(Framing::Handshake {
        session: Some("s".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    });
    let ours = RequestId::Number(10);
    assert!(matches!(
        session.handle(&ours, msg(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)),
        Step::Send(_)
    ));
    assert!(matches!(
        session.handle(
            &ours,
            msg(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#)
        ),
        Step::Continue
    ));
    // Another id's response is not ours either.
    assert!(matches!(
        session.handle(&ours, msg(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)),
        Step::Continue
    ));
    // In the 2026 era a request on the stream ends the exchange at once, as in a call.
    let modern = Exchange::new(Framing::Stateless(V2026));
    assert!(matches!(
        modern.handle(&ours, msg(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)),
        Step::Done(Err(CallError::Protocol(Violation::ServerRequest { method, .. }))) if method == "ping"
    ));
    assert!(matches!(
        modern.handle(
            &ours,
            msg(r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}"#)
        ),
        Step::Done(Err(CallError::NeedsInput(_)))
    ));
}

#[test]
fn a_stale_era_is_read_alike_from_a_body_and_a_status() {
    let modern = Exchange::new(Framing::Stateless(V2026));
    let stale = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    let Step::Done(Err(from_body)) = modern.handle(&RequestId::Number(3), msg(stale)) else {
        panic!("the stale answer ends the exchange");
    };
    let from_status = modern
        .handle_status(400, RpcError::from_body(stale.as_bytes()), None)
        .expect("the core decides a JSON-RPC error with any status");
    assert_eq!(from_body, from_status);
    assert!(matches!(
        from_body,
        CallError::Rpc {
            forget_era: true,
            ..
        }
    ));
    assert!(
        modern.handle_status(500, None, None).is_none(),
        "a bare status is the driver's"
    );
    // A refusal of our credentials, whatever the body says, is the core's verdict.
    assert!(matches!(
        modern.handle_status(401, RpcError::from_body(stale.as_bytes()), Some("Bearer")),
        Some(CallError::Unauthorized { status: 401, .. })
    ));
}

#[test]
fn tools_with_bad_param_headers_are_offered_only_where_headers_are_not_built() {
    let tool = |schema: &str| -> crate::mcp::Tool {
        serde_json::from_str(&format!(r#"{{"name":"t","inputSchema":{schema}}}"#)).unwrap()
    };
    let good = tool(
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
    );
    // A header name HTTP cannot carry: the tool cannot be called in the 2026 era.
    let bad = tool(
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Bad Name"}}}"#,
    );
    let stateless = Framing::Stateless(V2026);
    let session = Framing::Handshake {
        session: Some("s".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    };
    assert_eq!(listing::offered(&stateless, &good), Ok(()));
    let why = listing::offered(&stateless, &bad)
        .expect_err("not offered")
        .to_string();
    assert!(why.contains("x-mcp-header"), "{why}");
    // The handshake era sends no Mcp-Param headers: every listed tool may be offered.
    assert_eq!(listing::offered(&session, &bad), Ok(()));
}
