use std::borrow::Cow;

use serde_json::{Value, json};

use super::*;

fn single(bytes: &[u8]) -> Message<'_> {
    match decode(bytes).unwrap() {
        Incoming::Single(m) => m,
        Incoming::Batch(_) => panic!("expected a single message"),
    }
}

fn kind_of(bytes: &[u8]) -> DecodeErrorKind {
    decode(bytes).unwrap_err().kind
}

#[test]
fn decodes_request_and_borrows_method() {
    let m = single(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#);
    let Message::Request(r) = &m else {
        panic!("not a request: {m:?}")
    };
    assert_eq!(r.id, RequestId::Number(1));
    assert!(matches!(r.method, Cow::Borrowed("tools/list")));
    assert_eq!(r.params.unwrap().get(), r#"{"cursor":"c"}"#);
    assert_eq!(m.method(), Some("tools/list"));
    assert_eq!(m.id(), Some(&RequestId::Number(1)));
}

#[test]
fn escaped_method_is_owned_and_unescaped() {
    let m = single(br#"{"jsonrpc":"2.0","method":"a\/b"}"#);
    let Message::Notification(n) = m else {
        panic!()
    };
    assert_eq!(n.method, "a/b");
    assert!(matches!(n.method, Cow::Owned(_)));
    assert!(n.params.is_none());
}

#[test]
fn null_params_count_as_absent_but_scalars_are_rejected() {
    let m = single(br#"{"jsonrpc":"2.0","method":"ping","id":"x","params":null}"#);
    assert!(m.params().is_none());
    assert!(matches!(
        kind_of(br#"{"jsonrpc":"2.0","method":"ping","id":1,"params":3}"#),
        DecodeErrorKind::InvalidField {
            field: "params",
            ..
        }
    ));
}

#[test]
fn decodes_response_and_errors() {
    let m = single(b"\xEF\xBB\xBF {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}");
    assert!(
        matches!(&m, Message::Response(r) if r.id == RequestId::from("a") && r.result.get() == "{}")
    );

    let m = single(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1]}}"#,
    );
    let Message::Error(e) = m else { panic!() };
    assert_eq!(e.id, None);
    assert_eq!(e.error.code, ErrorCode::PARSE_ERROR);
    assert_eq!(e.error.message, "bad");
    assert_eq!(e.error.data.unwrap().get(), "[1]");

    let m = single(br#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}}"#);
    assert!(matches!(m, Message::Error(ErrorResponse { id: None, .. })));

    // Odd ids on errors are dropped rather than failing the whole message.
    let m = single(br#"{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"x"}}"#);
    assert!(matches!(m, Message::Error(ErrorResponse { id: None, .. })));
}

#[test]
fn strictness_rules() {
    assert_eq!(
        kind_of(br#"{"id":1,"result":{}}"#),
        DecodeErrorKind::MissingVersion
    );
    assert!(matches!(
        kind_of(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
        DecodeErrorKind::WrongVersion { .. }
    ));
    assert!(matches!(
        kind_of(br#"{"jsonrpc":2.0,"id":1,"result":{}}"#),
        DecodeErrorKind::WrongVersion { .. }
    ));
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
        DecodeErrorKind::NullId { kind: "request" }
    );
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
        DecodeErrorKind::NullId { kind: "response" }
    );
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","result":{}}"#),
        DecodeErrorKind::MissingId
    );
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#),
        DecodeErrorKind::ResultAndError
    );
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","id":1}"#),
        DecodeErrorKind::NeitherResultNorError
    );
    assert_eq!(
        kind_of(br#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#),
        DecodeErrorKind::MethodWithResult
    );
    for bad_id in ["true", "1.5", "{}", "[1]", "9223372036854775808"] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{bad_id},"method":"m"}}"#);
        assert!(
            matches!(
                kind_of(text.as_bytes()),
                DecodeErrorKind::InvalidField { field: "id", .. }
            ),
            "{bad_id}"
        );
    }
    assert!(matches!(
        kind_of(br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}"#),
        DecodeErrorKind::InvalidField {
            field: "error.code",
            ..
        }
    ));
    assert!(matches!(
        kind_of(br#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#),
        DecodeErrorKind::InvalidField { field: "error", .. }
    ));
}

#[test]
fn a_null_partner_of_result_or_error_is_absent() {
    let m = single(br#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":null}"#);
    assert!(matches!(m, Message::Response(_)));
    let m = single(br#"{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":1,"message":"x"}}"#);
    assert!(matches!(m, Message::Error(_)));
    // Only when the other member is there: a lone null error is still not an error object.
    assert!(matches!(
        kind_of(br#"{"jsonrpc":"2.0","id":1,"error":null}"#),
        DecodeErrorKind::InvalidField { field: "error", .. }
    ));
}

#[test]
fn error_messages_say_what_and_where() {
    let e = decode(b"{\"jsonrpc\":\"2.0\",\n\"id\":1,").unwrap_err();
    let DecodeErrorKind::Json { line, .. } = e.kind else {
        panic!("{e}")
    };
    assert_eq!(line, 2);
    let e = decode(br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#).unwrap_err();
    assert!(e.to_string().contains("duplicate field `id`"), "{e}");
    let e = decode(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":true,"method":"b"}]"#)
        .unwrap_err();
    assert_eq!(e.batch_index, Some(1));
    assert_eq!(
        e.to_string(),
        "batch element 1: member \"id\": expected an integer or a string, found the boolean true"
    );
    assert!(matches!(
        kind_of(b"42"),
        DecodeErrorKind::NotAnObject { .. }
    ));
    assert!(matches!(
        kind_of(b"[1]"),
        DecodeErrorKind::NotAnObject { .. }
    ));
    assert!(matches!(kind_of(b""), DecodeErrorKind::Json { .. }));
    assert!(matches!(
        kind_of(b"{\"jsonrpc\":\"2.0\"} trailing"),
        DecodeErrorKind::Json { .. }
    ));
}

#[test]
fn batches() {
    let inc = decode(br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]"#)
        .unwrap();
    assert_eq!(inc.len(), 2);
    let ms = inc.into_messages();
    assert!(ms[0].is_response());
    assert_eq!(ms[1].kind(), "notification");
    assert_eq!(kind_of(b" [ ] "), DecodeErrorKind::EmptyBatch);
}

#[test]
fn raw_messages_split_without_decoding() {
    let parts =
        raw_messages(b"\xEF\xBB\xBF [{\"a\":1} , {\"jsonrpc\":\"2.0\",\"method\":\"n\"}]").unwrap();
    let texts: Vec<&str> = parts.iter().map(|r| r.get()).collect();
    assert_eq!(texts, [r#"{"a":1}"#, r#"{"jsonrpc":"2.0","method":"n"}"#]);
    assert!(decode_raw(parts[0]).is_err());
    assert_eq!(decode_raw(parts[1]).unwrap().method(), Some("n"));
    let one = raw_messages(b" {\"x\":[1]}\n").unwrap();
    assert_eq!(one[0].get(), r#"{"x":[1]}"#);
    assert_eq!(
        raw_messages(b"[]").unwrap_err().kind,
        DecodeErrorKind::EmptyBatch
    );
    assert!(matches!(
        raw_messages(b"\"s\"").unwrap_err().kind,
        DecodeErrorKind::NotAnObject { .. }
    ));
    assert!(matches!(
        raw_messages(b"{").unwrap_err().kind,
        DecodeErrorKind::Json { .. }
    ));
}

#[test]
fn unknown_members_are_ignored() {
    let m = single(br#"{"jsonrpc":"2.0","id":1,"result":{},"extra":[1,2]}"#);
    assert!(m.is_response());
}

fn as_value(bytes: &[u8]) -> Value {
    assert!(
        !bytes.contains(&b'\n'),
        "{}",
        String::from_utf8_lossy(bytes)
    );
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn encodes_compact_messages() {
    let req = encode_request(&RequestId::Number(3), "tools/call", &json!({"name":"x"})).unwrap();
    assert_eq!(
        req,
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#
    );
    let ping = encode_request(&RequestId::from("p\"1"), "ping", &()).unwrap();
    assert_eq!(
        as_value(&ping),
        json!({"jsonrpc":"2.0","id":"p\"1","method":"ping"})
    );
    let n = encode_notification("notifications/initialized", None::<&Value>).unwrap();
    assert_eq!(n, encode_bare_notification("notifications/initialized"));
    assert_eq!(
        n,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let resp = encode_response(&RequestId::Number(-1), &json!({})).unwrap();
    assert_eq!(resp, br#"{"jsonrpc":"2.0","id":-1,"result":{}}"#);
    let err = encode_error(
        Some(&RequestId::Number(9)),
        ErrorCode::METHOD_NOT_FOUND,
        "no\nsuch",
        Some(&json!({"m":1})),
    );
    assert_eq!(
        as_value(&err),
        json!({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no\nsuch","data":{"m":1}}})
    );
    let err = encode_error(None, ErrorCode(-1), "x", None);
    assert_eq!(
        err,
        br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"x"}}"#
    );
}

#[test]
fn raw_params_with_line_breaks_are_flattened() {
    let raw = serde_json::value::RawValue::from_string(
        "{\r\n  \"a\": \"l1\\nl2\",\n  \"b\": [1,\n2]\n}".to_owned(),
    )
    .unwrap();
    let out = encode_request(&RequestId::Number(1), "m", &raw).unwrap();
    assert!(!out.contains(&b'\n') && !out.contains(&b'\r'));
    assert_eq!(as_value(&out)["params"], json!({"a":"l1\nl2","b":[1,2]}));
}

#[test]
fn encode_failure_is_typed() {
    let mut bad = std::collections::BTreeMap::new();
    bad.insert(vec![1u8], 1);
    let e = encode_request(&RequestId::Number(1), "m", &bad).unwrap_err();
    assert_eq!((e.kind, e.part), ("request", "params"));
}
