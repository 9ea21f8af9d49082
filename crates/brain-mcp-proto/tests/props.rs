//! Property tests: encode/decode identity, no panics on any input, header
//! value round trips, and typed values losing nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test

mod common;

use brain_mcp_proto::headers::{decode_header_value, encode_header_str};
use brain_mcp_proto::jsonrpc::{
    ErrorCode, Incoming, Message, RequestId, decode, encode_error, encode_notification,
    encode_request, encode_response,
};
use brain_mcp_proto::{fuzzing, mcp};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        any::<String>().prop_map(RequestId::String)
    ]
}

/// Member names that the typed decoders know, mixed with random ones.
const KEYS: &[&str] = &[
    "type",
    "text",
    "data",
    "mimeType",
    "uri",
    "name",
    "title",
    "content",
    "structuredContent",
    "isError",
    "resultType",
    "_meta",
    "tools",
    "inputSchema",
    "outputSchema",
    "nextCursor",
    "ttlMs",
    "cacheScope",
    "annotations",
    "protocolVersion",
    "capabilities",
    "serverInfo",
    "supportedVersions",
    "inputRequests",
    "requestState",
    "progressToken",
    "progress",
    "total",
    "message",
    "resource",
    "blob",
    "version",
    "level",
    "x-mcp-header",
    "properties",
    "items",
    "audience",
    "priority",
    "roots",
    "action",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e6f64..1.0e6).prop_map(Value::from),
        prop_oneof![
            Just("text".to_owned()),
            Just("image".to_owned()),
            Just("complete".to_owned()),
            ".{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![prop::sample::select(KEYS).prop_map(str::to_owned), ".{0,6}"],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        (
            prop::sample::select(KEYS).prop_map(str::to_owned),
            json_value(),
        ),
        0..8,
    )
    .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

fn single(bytes: &[u8]) -> Message<'_> {
    match decode(bytes).unwrap() {
        Incoming::Single(m) => m,
        Incoming::Batch(_) => panic!("encoders never write batches"),
    }
}

fn raw_json(raw: Option<&serde_json::value::RawValue>) -> Option<Value> {
    raw.map(|r| serde_json::from_str(r.get()).unwrap())
}

/// If `T` accepts `v`, re-encoding must give back `v`, except that a missing
/// list or object named in `defaults` comes back empty.
fn lossless<T: serde::Serialize + serde::de::DeserializeOwned>(
    v: &Value,
    defaults: &[(&str, Value)],
) -> Result<(), TestCaseError> {
    let text = v.to_string();
    if let Ok(typed) = serde_json::from_str::<T>(&text) {
        let mut expected = v.clone();
        if let Some(map) = expected.as_object_mut() {
            for (key, empty) in defaults {
                map.entry(*key).or_insert_with(|| empty.clone());
            }
        }
        let back: Value = serde_json::from_str(&serde_json::to_string(&typed).unwrap()).unwrap();
        prop_assert!(
            common::same_json(&back, &expected),
            "{} lost data:\n in: {v}\nout: {back}",
            std::any::type_name::<T>()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn requests_round_trip(id in request_id(), method in ".*", params in object()) {
        let bytes = encode_request(&id, &method, &params).unwrap();
        prop_assert!(!bytes.contains(&b'\n'));
        let Message::Request(r) = single(&bytes) else { panic!("not a request") };
        prop_assert_eq!(r.id, id);
        prop_assert_eq!(&*r.method, method.as_str());
        prop_assert_eq!(raw_json(r.params), Some(params));
    }

    #[test]
    fn notifications_round_trip(method in ".*", params in prop::option::of(object())) {
        let bytes = encode_notification(&method, params.as_ref()).unwrap();
        let Message::Notification(n) = single(&bytes) else { panic!("not a notification") };
        prop_assert_eq!(&*n.method, method.as_str());
        prop_assert_eq!(raw_json(n.params), params);
    }

    #[test]
    fn responses_round_trip(id in request_id(), result in json_value()) {
        let bytes = encode_response(&id, &result).unwrap();
        let Message::Response(r) = single(&bytes) else { panic!("not a response") };
        prop_assert_eq!(r.id, id);
        prop_assert_eq!(raw_json(Some(r.result)), Some(result));
    }

    #[test]
    fn errors_round_trip(id in prop::option::of(request_id()), code in any::<i64>(), message in ".*", data in prop::option::of(json_value())) {
        let bytes = encode_error(id.as_ref(), ErrorCode(code), &message, data.as_ref());
        prop_assert!(!bytes.contains(&b'\n'));
        let Message::Error(e) = single(&bytes) else { panic!("not an error") };
        prop_assert_eq!(e.id, id);
        prop_assert_eq!(e.error.code, ErrorCode(code));
        prop_assert_eq!(&*e.error.message, message.as_str());
        prop_assert_eq!(raw_json(e.error.data), data);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::decode_message(&bytes);
    }

    #[test]
    fn arbitrary_json_messages_never_panic(id in json_value(), body in json_value(), method in prop::sample::select(&[
        "initialize", "tools/list", "tools/call", "notifications/progress", "notifications/cancelled",
        "notifications/message", "elicitation/create", "sampling/createMessage", "ping",
    ][..])) {
        for msg in [
            json!({"jsonrpc":"2.0","id":id,"result":body}),
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":body}),
            json!({"jsonrpc":"2.0","method":method,"params":body}),
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32022,"message":"m","data":body}}),
            json!([{"jsonrpc":"2.0","id":1,"result":body}, body]),
        ] {
            fuzzing::decode_message(msg.to_string().as_bytes());
        }
    }

    #[test]
    fn mangled_messages_never_panic(cut in 0usize..200, flip in any::<u8>(), at in 0usize..200) {
        let base = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"h\u00e9"},{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"a":[1,2.5]},"isError":false}}"#;
        let mut bytes = base[..cut.min(base.len())].to_vec();
        if let Some(b) = bytes.get_mut(at) { *b ^= flip; }
        fuzzing::decode_message(&bytes);
    }

    #[test]
    fn header_strings_round_trip(s in any::<String>()) {
        let enc = encode_header_str(&s);
        prop_assert!(enc.bytes().all(|b| (0x20..=0x7E).contains(&b)), "not header-safe: {enc:?}");
        prop_assert!(!enc.starts_with(' ') && !enc.ends_with(' '));
        prop_assert_eq!(decode_header_value(&enc).unwrap(), s);
    }

    #[test]
    fn typed_values_lose_nothing(v in object()) {
        lossless::<mcp::CallToolResult>(&v, &[("content", json!([]))])?;
        lossless::<mcp::ListToolsResult>(&v, &[("tools", json!([]))])?;
        lossless::<mcp::Tool>(&v, &[])?;
        lossless::<mcp::InitializeResult>(&v, &[])?;
        lossless::<mcp::DiscoverResult>(&v, &[("capabilities", json!({}))])?;
        lossless::<mcp::InputRequiredResult>(&v, &[])?;
        lossless::<mcp::ProgressParams>(&v, &[])?;
        lossless::<mcp::CallToolParams>(&v, &[])?;
        lossless::<mcp::ContentBlock>(&v, &[])?;
        lossless::<mcp::Implementation>(&v, &[])?;
        lossless::<mcp::ElicitRequestParams>(&v, &[])?;
        lossless::<mcp::LoggingMessageParams>(&v, &[])?;
    }
}
