use serde_json::{Map, Value, json};

use super::{identity, json as parse, msg};
use crate::client::{
    Action, Call, CallError, CallRequest, Carrier, Expect, Framing, Identity, NeedsInput, Refusal,
    Violation,
};
use crate::jsonrpc::{ErrorCode, RequestId};
use crate::mcp::{ClientCapabilities, ElicitationCapability};
use crate::version::ProtocolVersion;

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn session() -> Framing {
    Framing::Handshake {
        session: Some("sid".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    }
}

fn with_input() -> Identity {
    identity().with_capabilities(ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    })
}

fn args() -> Map<String, Value> {
    serde_json::from_str(r#"{"region":"eu","n":123456789012345678901234567890}"#).unwrap()
}

fn start(
    framing: Framing,
    who: &Identity,
    arguments: &Map<String, Value>,
) -> (Call, crate::client::Outgoing) {
    let schema = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
    let scope: &'static Map<String, Value> = Box::leak(Box::new(
        [("brain.dev/scope".to_owned(), json!({"tenant_id": "t"}))]
            .into_iter()
            .collect(),
    ));
    let mut request = CallRequest::new("get weather", arguments, "call-1");
    request.meta = Some(scope);
    request.input_schema = Some(Box::leak(Box::new(schema)));
    Call::start(framing, Carrier::Http, RequestId::Number(7), &request, who)
}

/// Feeding a call the text of one message, as a link does once it decoded it.
trait Feed {
    fn feed(&mut self, text: &str);
}

impl Feed for Call {
    fn feed(&mut self, text: &str) {
        self.handle(msg(text));
    }
}

fn drain(call: &mut Call) -> Vec<Action> {
    std::iter::from_fn(|| call.poll()).collect()
}

fn finished(actions: &[Action]) -> &Result<crate::mcp::CallToolResult, CallError> {
    match actions.last() {
        Some(Action::Finished(outcome)) => outcome,
        other => panic!("not finished: {other:?}"),
    }
}

#[test]
fn the_request_per_era() {
    let arguments = args();
    let (_, out) = start(session(), &identity(), &arguments);
    let body = parse(&out.body);
    assert_eq!(body["params"]["arguments"], json!(arguments));
    assert_eq!(body["params"]["name"], "get weather");
    assert_eq!(
        body["params"]["_meta"],
        json!({"progressToken": "call-1", "brain.dev/scope": {"tenant_id": "t"}})
    );
    assert_eq!(out.expect, Expect::Response(RequestId::Number(7)));
    assert!(!out.idempotent, "a call is never resent");
    assert_eq!(out.resume_attempts, 2);
    let names: Vec<&str> = out.headers.iter().map(|h| h.name.as_ref()).collect();
    assert_eq!(names, ["mcp-session-id", "mcp-protocol-version"]);

    let (_, out) = start(Framing::Stateless(V2026), &identity(), &arguments);
    let body = parse(&out.body);
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // Every 2026-era call declares the tasks extension.
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    assert_eq!(meta["progressToken"], "call-1");
    assert_eq!(
        out.resume_attempts, 0,
        "a broken 2026 stream loses the request"
    );
    let headers: Vec<(String, String)> = out
        .headers
        .iter()
        .map(|h| (h.name.to_string(), h.value.to_string()))
        .collect();
    assert!(headers.contains(&("mcp-method".into(), "tools/call".into())));
    assert!(headers.contains(&("mcp-name".into(), "get weather".into())));
    assert!(
        headers.contains(&("mcp-param-region".into(), "eu".into())),
        "{headers:?}"
    );
}

#[test]
fn the_callers_text_is_the_body_and_gives_number_headers_their_digits() {
    let text = r#"{"region":"eu", "n": 123456789012345678901234567890, "f": 4.0}"#;
    let raw = serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
    let arguments: Map<String, Value> = serde_json::from_str(text).unwrap();
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "number", "x-mcp-header": "N"},
        "f": {"type": "number", "x-mcp-header": "F"}}});
    let mut request = CallRequest::new("t", &arguments, "call-1");
    request.arguments_text = Some(&raw);
    request.input_schema = Some(&schema);
    for framing in [session(), Framing::Stateless(V2026)] {
        let (_, out) = Call::start(
            framing,
            Carrier::Http,
            RequestId::Number(7),
            &request,
            &identity(),
        );
        let body = String::from_utf8(out.body.clone()).unwrap();
        assert!(body.contains(&format!(r#""arguments":{text}"#)), "{body}");
        let headers: Vec<(String, String)> = out
            .headers
            .iter()
            .map(|h| (h.name.to_string(), h.value.to_string()))
            .filter(|(name, _)| name.starts_with("mcp-param"))
            .collect();
        if !headers.is_empty() {
            // The digits the body holds; an integral float as its integer.
            assert_eq!(
                headers,
                [
                    ("mcp-param-f".to_owned(), "4".to_owned()),
                    (
                        "mcp-param-n".to_owned(),
                        "123456789012345678901234567890".to_owned()
                    )
                ]
            );
        }
    }
}

#[test]
fn progress_for_our_token_only_with_exact_numbers() {
    let arguments = args();
    let (mut call, _) = start(session(), &identity(), &arguments);
    call.feed(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"call-1","progress":0.1000000000000000055511151231257827,"total":3,"message":"m"}}"#);
    call.feed(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":2}}"#);
    call.feed(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#);
    let actions = drain(&mut call);
    assert_eq!(actions.len(), 1);
    let Action::Progress(p) = &actions[0] else {
        panic!("{actions:?}")
    };
    assert_eq!(
        p.progress.to_string(),
        "0.1000000000000000055511151231257827"
    );
    assert_eq!(
        p.total.as_ref().map(ToString::to_string).as_deref(),
        Some("3")
    );
    assert_eq!(p.message.as_deref(), Some("m"));
    // A number that is no number, or one longer than any count, is not passed on.
    let long = "1".repeat(65);
    for progress in ["\"1\"", long.as_str()] {
        call.feed(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"call-1","progress":{progress}}}}}"#
        ));
        assert!(drain(&mut call).is_empty(), "{progress}");
    }
}

#[test]
fn server_requests_in_a_session() {
    let arguments = args();
    let (mut call, _) = start(session(), &identity(), &arguments);
    call.feed(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#);
    call.feed(r#"{"jsonrpc":"2.0","id":"x","method":"resources/list"}"#);
    let actions = drain(&mut call);
    let [Action::Send(pong), Action::Send(refusal)] = &actions[..] else {
        panic!("{actions:?}")
    };
    let pong_text = String::from_utf8(pong.body.clone()).unwrap();
    assert!(
        pong_text.contains(r#""id":9007199254740993"#),
        "{pong_text}"
    );
    assert_eq!(parse(&pong.body)["result"], json!({}));
    assert_eq!(pong.expect, Expect::Accepted);
    assert_eq!(parse(&refusal.body)["error"]["code"], -32601);
    assert!(!call.is_finished(), "the call goes on");

    // Input requests: refused and the call fails, for a client that gives no input...
    call.feed(r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}"#);
    let actions = drain(&mut call);
    assert!(
        matches!(&actions[0], Action::Send(out) if parse(&out.body)["error"]["code"] == -32601)
    );
    assert!(
        matches!(finished(&actions), Err(CallError::NeedsInput(NeedsInput::Request(m))) if m == "elicitation/create")
    );
    assert!(call.cancel().is_none(), "an answered call needs no cancel");

    // ...handed to the responder otherwise, and answered with what it says.
    let (mut call, _) = start(session(), &with_input(), &arguments);
    call.feed(
        r#"{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"ok?"}}"#,
    );
    let actions = drain(&mut call);
    let [Action::Ask { id, method, params }] = &actions[..] else {
        panic!("{actions:?}")
    };
    assert_eq!(method, "elicitation/create");
    assert_eq!(
        params.as_ref().map(|p| p.get()),
        Some(r#"{"message":"ok?"}"#)
    );
    let answer = call.answer(id, Ok(json!({"action": "accept", "content": {}})));
    assert_eq!(parse(&answer.body)["result"]["action"], "accept");
    let refusal = call.answer(id, Err(Refusal::new(ErrorCode(-1), "no")));
    assert_eq!(parse(&refusal.body)["error"]["message"], "no");
}

#[test]
fn server_requests_in_the_2026_era_end_the_call_at_once() {
    let arguments = args();
    for (message, expect_input) in [
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#,
            true,
        ),
    ] {
        let (mut call, _) = start(Framing::Stateless(V2026), &with_input(), &arguments);
        call.feed(message);
        let actions = drain(&mut call);
        assert_eq!(actions.len(), 1, "nothing is POSTed back in the 2026 era");
        match finished(&actions) {
            Err(CallError::NeedsInput(_)) => assert!(expect_input),
            Err(CallError::Protocol(Violation::ServerRequest { method, .. })) => {
                assert!(!expect_input && method == "ping", "{method}")
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn results_and_errors_whatever_carried_them() {
    let arguments = args();
    let (mut call, _) = start(session(), &identity(), &arguments);
    call.feed(
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"t"}],"isError":true}}"#,
    );
    let actions = drain(&mut call);
    let result = finished(&actions).as_ref().expect("a result");
    assert_eq!(result.content.len(), 1);
    assert_eq!(result.is_error, Some(true));
    assert!(call.cancel().is_none());

    // -32022 in a 200 body and with a 400 status: the same error, and in the 2026 era
    // both say the cached era is stale.
    let stale = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    let (mut in_body, _) = start(Framing::Stateless(V2026), &identity(), &arguments);
    in_body.feed(stale);
    let from_body = finished(&drain(&mut in_body)).clone().unwrap_err();
    let (mut in_status, _) = start(Framing::Stateless(V2026), &identity(), &arguments);
    assert!(in_status.handle_status(
        400,
        crate::client::RpcError::from_body(stale.as_bytes()),
        None
    ));
    let from_status = finished(&drain(&mut in_status)).clone().unwrap_err();
    assert_eq!(from_body, from_status);
    assert!(
        matches!(from_body, CallError::Rpc { forget_era: true, ref error } if error.supported_versions() == ["2026-07-28"])
    );
    // In a session the same code means nothing about a cached era.
    let (mut old, _) = start(session(), &identity(), &arguments);
    old.feed(stale);
    assert!(matches!(
        finished(&drain(&mut old)),
        Err(CallError::Rpc {
            forget_era: false,
            ..
        })
    ));

    // Statuses without a JSON-RPC error are the driver's, except a session that is gone
    // and a refusal of our credentials (the tool did not run).
    let (mut call, _) = start(session(), &identity(), &arguments);
    assert!(!call.handle_status(500, None, None));
    assert!(call.handle_status(404, None, None));
    assert!(matches!(
        finished(&drain(&mut call)),
        Err(CallError::SessionExpired)
    ));
    for status in [401, 403] {
        let (mut call, _) = start(Framing::Stateless(V2026), &identity(), &arguments);
        assert!(call.handle_status(status, None, Some("Bearer error=\"invalid_token\"")));
        match finished(&drain(&mut call)) {
            Err(e @ CallError::Unauthorized { challenge, .. }) => {
                assert!(e.tool_did_not_run());
                assert_eq!(challenge.as_deref(), Some("Bearer error=\"invalid_token\""));
            }
            other => panic!("{status}: {other:?}"),
        }
    }
}

#[test]
fn input_required_rounds() {
    let arguments = args();
    let asked = r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"ok?"}}},"requestState":"st-1"}}"#;
    // Without a responder: the call needs input it cannot get.
    let (mut call, _) = start(Framing::Stateless(V2026), &identity(), &arguments);
    call.feed(asked);
    assert!(matches!(
        finished(&drain(&mut call)),
        Err(CallError::NeedsInput(NeedsInput::Round))
    ));

    // With one: the requests, then a retry with a new id, the answers and the state.
    let who = with_input();
    let (mut call, first) = start(Framing::Stateless(V2026), &who, &arguments);
    call.feed(asked);
    let actions = drain(&mut call);
    let [Action::InputRequired { requests, state }] = &actions[..] else {
        panic!("{actions:?}")
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].key.as_str(), requests[0].method.as_str()),
        ("confirm", "elicitation/create")
    );
    assert_eq!(state.as_deref(), Some("st-1"));
    let answers = vec![
        (
            "confirm".to_owned(),
            Ok(json!({"action": "accept", "content": {"ok": true}})),
        ),
        (
            "roots".to_owned(),
            Err(Refusal::new(ErrorCode::METHOD_NOT_FOUND, "no roots")),
        ),
    ];
    let request = CallRequest::new("get weather", &arguments, "call-1");
    let retry = call.retry(
        RequestId::Number(8),
        &request,
        &who,
        answers,
        state.as_deref(),
    );
    let body = parse(&retry.body);
    assert_eq!(body["id"], 8);
    // Each answer under its key; a refusal as an error object.
    assert_eq!(
        body["params"]["inputResponses"],
        json!({
            "confirm": {"action": "accept", "content": {"ok": true}},
            "roots": {"error": {"code": -32601, "message": "no roots"}},
        })
    );
    assert_eq!(body["params"]["requestState"], "st-1");
    assert_eq!(call.request_id(), &RequestId::Number(8));
    assert!(parse(&first.body)["params"].get("inputResponses").is_none());
    call.feed(r#"{"jsonrpc":"2.0","id":8,"result":{"content":[],"resultType":"complete"}}"#);
    assert!(finished(&drain(&mut call)).is_ok());

    // A server that keeps asking is cut off.
    let (mut call, _) = start(Framing::Stateless(V2026), &who, &arguments);
    for _ in 0..9 {
        // Each round is asked again under the id of the request in flight.
        let id = serde_json::to_string(call.request_id()).unwrap();
        call.feed(&asked.replacen("\"id\":7", &format!("\"id\":{id}"), 1));
        let _ = drain(&mut call);
        let _ = call.retry(RequestId::Number(9), &request, &who, Vec::new(), None);
    }
    assert!(call.is_finished());
}

#[test]
fn cancelling_per_era() {
    let arguments = args();
    let (call, _) = start(session(), &identity(), &arguments);
    let cancel = call
        .cancel()
        .expect("a session cancels with a notification");
    assert_eq!(parse(&cancel.body)["params"]["requestId"], 7);
    let (call, _) = start(Framing::Stateless(V2026), &identity(), &arguments);
    assert!(
        call.cancel().is_none(),
        "the 2026 era over HTTP cancels by closing the stream"
    );
    // A child process has no stream to close: a notification in either era, for the
    // request in flight, until the call has its outcome.
    let request = CallRequest::new("t", &arguments, "call-1");
    for framing in [session(), Framing::Stateless(V2026)] {
        for carrier in [Carrier::Process, Carrier::SharedProcess] {
            let (mut call, _) = Call::start(
                framing.clone(),
                carrier,
                RequestId::Number(7),
                &request,
                &identity(),
            );
            let cancel = call
                .cancel()
                .expect("a process cancels with a notification");
            let body = parse(&cancel.body);
            assert_eq!(body["method"], "notifications/cancelled");
            assert_eq!(body["params"]["requestId"], 7);
            call.feed(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#);
            assert!(call.cancel().is_none(), "{framing:?} {carrier:?}");
        }
    }
}

#[test]
fn the_progress_token_per_carrier() {
    // Brain's call id over HTTP and a child of its own (the documented contract); the
    // first request id, unique in the process, on a child many calls share, where a
    // reused call id would route one call's progress to another.
    let arguments = args();
    let request = CallRequest::new("t", &arguments, "call-1");
    for (carrier, token) in [
        (Carrier::Http, json!("call-1")),
        (Carrier::Process, json!("call-1")),
        (Carrier::SharedProcess, json!(42)),
    ] {
        let (call, out) = Call::start(
            Framing::Stateless(V2026),
            carrier,
            RequestId::Number(42),
            &request,
            &identity(),
        );
        assert_eq!(parse(&out.body)["params"]["_meta"]["progressToken"], token);
        assert_eq!(
            serde_json::to_value(call.progress_token()).unwrap(),
            token,
            "{carrier:?}"
        );
        assert_eq!(out.progress_token.as_ref(), Some(call.progress_token()));
    }
}

#[test]
fn structured_content_per_era() {
    // 2025 revisions allow an object only; 2026-07-28 any value; null is none.
    let arguments = args();
    for (framing, value, ok) in [
        (session(), "{\"a\":1}", true),
        (session(), "[1]", false),
        (session(), "\"text\"", false),
        (session(), "null", true),
        (Framing::Stateless(V2026), "[1]", true),
        (Framing::Stateless(V2026), "3", true),
    ] {
        let (mut call, _) = start(framing.clone(), &identity(), &arguments);
        call.feed(&format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[],"structuredContent":{value}}}}}"#
        ));
        let actions = drain(&mut call);
        let outcome = finished(&actions);
        assert_eq!(outcome.is_ok(), ok, "{framing:?} {value}: {outcome:?}");
        if value == "null" {
            assert!(outcome.as_ref().unwrap().structured_content.is_none());
        }
    }
}

#[test]
fn the_borrowed_meta_is_what_the_builder_writes() {
    // The call writes `_meta` from borrowed parts; it must be byte for byte the object
    // `Framing::meta` (the era's keys, through `RequestMetaBuilder`) gives with the
    // progress token and the caller's keys added, and a caller's key that repeats one
    // already written is left out rather than written twice.
    let arguments = args();
    let extra: Map<String, Value> = serde_json::from_value(json!({
        "brain.dev/scope": {"tenant_id": "t", "call_id": "c"},
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "progressToken": "forged",
        "io.modelcontextprotocol/protocolVersion": "1999-01-01",
    }))
    .unwrap();
    for (framing, who) in [
        (session(), identity()),
        (Framing::Stateless(V2026), identity()),
        (Framing::Stateless(V2026), with_input()),
    ] {
        let raw = [
            (
                "tracestate",
                serde_json::value::to_raw_value("k=v").unwrap(),
            ),
            (
                "progressToken",
                serde_json::value::to_raw_value("forged").unwrap(),
            ),
        ];
        let mut request = CallRequest::new("t", &arguments, "call-1");
        request.meta = Some(&extra);
        request.raw_meta = &raw;
        let (_, out) = Call::start(
            framing.clone(),
            Carrier::Http,
            RequestId::Number(1),
            &request,
            &who,
        );
        let sent = String::from_utf8(out.body).unwrap();

        // Written out by hand to keep the order: the token, the era's keys as the
        // builder serializes them, then the caller's keys in their map's order.
        // A call declares the tasks extension besides the identity's capabilities.
        let mut capabilities = who.capabilities().clone();
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert("io.modelcontextprotocol/tasks".into(), json!({}));
        let declared = who.clone().with_capabilities(capabilities);
        let base = serde_json::to_string(&framing.meta(&declared)).unwrap();
        let base_members = &base[1..base.len() - 1];
        let era_keys = serde_json::to_value(framing.meta(&declared)).unwrap();
        let mut members = vec![r#""progressToken":"call-1""#.to_owned()];
        if !base_members.is_empty() {
            members.push(base_members.to_owned());
        }
        for (key, value) in &extra {
            if key != "progressToken" && era_keys.get(key).is_none() {
                members.push(format!("{}:{}", json!(key), value));
            }
        }
        members.push(r#""tracestate":"k=v""#.to_owned());
        let meta_text = format!("{{{}}}", members.join(","));
        assert!(
            sent.contains(&format!(r#""_meta":{meta_text}"#)),
            "sent {sent}\nexpected _meta {meta_text}"
        );
    }
}

#[test]
fn a_result_is_read_once_and_checked() {
    // The core hands the driver a typed result; what it cannot read, or a kind of result
    // it does not know, ends the call as a protocol error naming it.
    let arguments = args();
    for (result, expected) in [
        (r#"{"content":"not a list"}"#, "invalid tools/call result"),
        (
            r#"{"content":[],"resultType":"task"}"#,
            "resultType \"task\"",
        ),
        (r#"[1]"#, "invalid tools/call result"),
    ] {
        let (mut call, _) = start(session(), &identity(), &arguments);
        call.feed(&format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#));
        match finished(&drain(&mut call)) {
            Err(CallError::Protocol(m)) => {
                assert!(m.to_string().contains(expected), "{result}: {m}")
            }
            other => panic!("{result}: {other:?}"),
        }
    }
    let (mut call, _) = start(session(), &identity(), &arguments);
    call.feed(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"resultType":"complete"}}"#);
    assert!(finished(&drain(&mut call)).is_ok());
}
