use serde_json::{Value, json};

use super::*;

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(v: Value) -> T {
    let typed: T = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), v);
    let from_str: T = serde_json::from_str(&v.to_string()).unwrap();
    assert_eq!(serde_json::to_value(&from_str).unwrap(), v);
    typed
}

#[test]
fn tool_keeps_schema_verbatim_and_extras() {
    let text = r#"{"name":"q","inputSchema":{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}},"$defs":{"z":1.0}},"future":[1],"title":null}"#;
    let tool: Tool = serde_json::from_str(text).unwrap();
    assert_eq!(
        tool.input_schema.get(),
        r#"{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}},"$defs":{"z":1.0}}"#
    );
    assert_eq!(tool.title, None);
    assert_eq!(tool.extra["future"], json!([1]));
    let back: Value = serde_json::from_str(&serde_json::to_string(&tool).unwrap()).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    assert_eq!(tool.display_name(), "q");
}

#[test]
fn required_members_and_duplicates_are_errors() {
    let raw = serde_json::value::RawValue::from_string(r#"{"name":"x"}"#.into()).unwrap();
    let e = parse::<Tool>(&raw).unwrap_err();
    assert_eq!(e.type_name, "Tool");
    assert!(e.message.contains("inputSchema"), "{e}");
    assert!(serde_json::from_str::<Tool>(r#"{"name":"a","name":"b","inputSchema":{}}"#).is_err());
}

#[test]
fn content_blocks_all_kinds_round_trip() {
    let result: CallToolResult = round_trip(json!({
        "content": [
            {"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":1}},
            {"type":"image","data":"aGk=","mimeType":"image/png"},
            {"type":"audio","data":"aGk=","mimeType":"audio/wav"},
            {"type":"resource_link","uri":"file:///a","name":"a","size":3},
            {"type":"resource","resource":{"uri":"x:1","text":"t","annotations":{"priority":1.0}}},
            {"type":"hologram","depth":3},
            {"type":"text"},
            {"no_type":true}
        ],
        "structuredContent": [1, "two"],
        "isError": false,
        "resultType": "complete"
    }));
    let kinds: Vec<String> = result.content.iter().map(ContentBlock::type_name).collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "hologram",
            "text",
            ""
        ]
    );
    assert!(matches!(result.content[5], ContentBlock::Unknown(_)));
    assert!(
        matches!(result.content[6], ContentBlock::Unknown(_)),
        "malformed text block kept raw"
    );
    let ContentBlock::Image(img) = &result.content[1] else {
        panic!()
    };
    assert_eq!(img.decode_data().unwrap(), b"hi");
    assert!(!result.failed());
    assert!(serde_json::from_value::<CallToolResult>(json!({"content":[1]})).is_err());
}

#[test]
fn call_tool_params_meta_keeps_scope() {
    let p: CallToolParams = round_trip(json!({
        "name":"t","arguments":{"a":1},
        "_meta":{"progressToken":"p1","brain.dev/scope":"s1","io.modelcontextprotocol/protocolVersion":"2026-07-28"}
    }));
    let meta = p.meta.unwrap();
    assert_eq!(meta.progress_token, Some(ProgressToken::from("p1")));
    assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(meta.extra["brain.dev/scope"], "s1");
}

#[test]
fn result_type_dispatch() {
    let raw = |v: Value| serde_json::value::to_raw_value(&v).unwrap();
    assert_eq!(
        peek_result_type(&raw(json!({"content":[]}))),
        ResultType::Complete
    );
    // The key's name written with an escape is still the key.
    let escaped: Box<serde_json::value::RawValue> =
        serde_json::from_str(r#"{"content":[],"result\u0054ype":"input_required"}"#).unwrap();
    assert_eq!(peek_result_type(&escaped), ResultType::InputRequired);
    let plain: Box<serde_json::value::RawValue> =
        serde_json::from_str(r#"{"resultType":"input_required"}"#).unwrap();
    assert_eq!(peek_result_type(&plain), ResultType::InputRequired);
    let ir = CallToolResponse::decode(&raw(json!({
        "resultType":"input_required",
        "inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},
        "requestState":"{\"s\":1}"
    })))
    .unwrap();
    let CallToolResponse::InputRequired(ir) = ir else {
        panic!()
    };
    assert_eq!(ir.request_state.as_deref(), Some("{\"s\":1}"));
    let reqs = ir.requests();
    let (key, req) = &reqs[0];
    assert_eq!(key, "a");
    let req = req.as_ref().unwrap();
    assert_eq!(req.method, methods::ELICITATION_CREATE);
    let params: ElicitRequestParams = parse(req.params.as_ref().unwrap()).unwrap();
    assert!(!params.is_url_mode());
    let other = CallToolResponse::decode(&raw(json!({"resultType":"task","task":{}}))).unwrap();
    assert!(
        matches!(other, CallToolResponse::Other { ref result_type, .. } if result_type == "task")
    );
    assert!(matches!(
        CallToolResponse::decode(&raw(json!({"content":[]}))).unwrap(),
        CallToolResponse::Complete(_)
    ));
}

#[test]
fn lifecycle_and_discover() {
    let r: InitializeResult = round_trip(json!({
        "protocolVersion":"2025-11-25",
        "capabilities":{"tools":{"listChanged":true},"logging":{},"tasks":{"list":{}}},
        "serverInfo":{"name":"s","version":"1","websiteUrl":"https://x","icons":[{"src":"data:,","sizes":["any"]}]},
        "instructions":"be nice"
    }));
    assert_eq!(r.capabilities.tools.unwrap().list_changed, Some(true));
    let d: DiscoverResult = round_trip(json!({
        "supportedVersions":["2026-07-28","2025-11-25"],
        "capabilities":{},
        "resultType":"complete","ttlMs":60000,"cacheScope":"private",
        "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"2"}},
        "serverInfo":{"name":"nonstandard","version":"0"}
    }));
    assert_eq!(d.cache_scope, Some(CacheScope::Private));
    assert_eq!(d.server_info().unwrap().name, "srv");
    assert!(
        serde_json::from_value::<DiscoverResult>(json!({})).is_err(),
        "{{}} is not a DiscoverResult"
    );
    let p: InitializeParams = round_trip(json!({
        "protocolVersion":"2025-11-25",
        "capabilities":{"elicitation":{"form":{}},"sampling":{},"roots":{"listChanged":true}},
        "clientInfo":{"name":"brain","version":"0.1"}
    }));
    assert!(p.capabilities.elicitation.unwrap().url.is_none());
}

#[test]
fn notifications_and_server_requests() {
    let p: ProgressParams =
        round_trip(json!({"progressToken":7,"progress":0.5,"total":2.5,"message":"m"}));
    assert_eq!(p.progress_token, ProgressToken::Number(7));
    let c: CancelledParams = round_trip(json!({"requestId":"r","reason":"timeout"}));
    assert_eq!(c.request_id, Some(crate::jsonrpc::RequestId::from("r")));
    let l: LoggingMessageParams =
        round_trip(json!({"level":"warning","logger":"x","data":{"a":[1]}}));
    assert_eq!(l.level, LoggingLevel::Warning);
    let l: LoggingMessageParams = round_trip(json!({"level":"verbose","data":null}));
    assert_eq!(l.level, LoggingLevel::Other("verbose".into()));
    let e: ElicitRequestParams =
        round_trip(json!({"mode":"url","message":"go","url":"https://x","elicitationId":"e1"}));
    assert!(e.is_url_mode());
    let r: ElicitResult = round_trip(json!({"action":"accept","content":{"a":"b"}}));
    assert_eq!(r.action, ElicitAction::Accept);
    let s: CreateMessageRequestParams = round_trip(json!({
        "messages":[{"role":"user","content":{"type":"text","text":"hi"}}],
        "maxTokens":100,"includeContext":"none","temperature":0.2
    }));
    assert_eq!(s.max_tokens, 100);
    let _: CreateMessageResult = round_trip(
        json!({"role":"assistant","content":{"type":"text","text":"ok"},"model":"m","stopReason":"endTurn"}),
    );
    let roots: ListRootsResult = round_trip(json!({"roots":[{"uri":"file:///w","name":"w"}]}));
    assert_eq!(roots.roots.len(), 1);
    let done: ElicitationCompleteParams = round_trip(json!({"elicitationId":"e1"}));
    assert_eq!(done.elicitation_id, "e1");
    let set: SetLevelParams = round_trip(json!({"level":"error"}));
    assert_eq!(set.level, LoggingLevel::Error);
    let _: EmptyResult = round_trip(json!({}));
    let _: EmptyParams = round_trip(json!({"_meta":{"progressToken":1}}));
}

#[test]
fn error_data_types() {
    let d: UnsupportedProtocolVersionData =
        round_trip(json!({"supported":["2026-07-28","2025-11-25"],"requested":"2099-01-01"}));
    assert_eq!(d.supported.len(), 2);
    let m: MissingRequiredClientCapabilityData =
        round_trip(json!({"requiredCapabilities":{"elicitation":{"url":{}}}}));
    assert!(m.required_capabilities.elicitation.unwrap().url.is_some());
    let h: HeaderMismatchData = round_trip(json!({"header":"Mcp-Name"}));
    assert_eq!(h.extra["header"], "Mcp-Name");
    let u: UrlElicitationRequiredData = round_trip(
        json!({"elicitations":[{"mode":"url","message":"m","url":"https://a","elicitationId":"1"}]}),
    );
    assert_eq!(u.elicitations.len(), 1);
}

#[test]
fn tool_names() {
    assert!(is_valid_tool_name("admin.tools.list"));
    assert!(is_valid_tool_name("DATA_EXPORT_v2-x"));
    assert!(is_valid_tool_name(&"a".repeat(128)));
    assert!(!is_valid_tool_name(&"a".repeat(129)));
    assert!(!is_valid_tool_name(""));
    assert!(!is_valid_tool_name("has space"));
    assert!(!is_valid_tool_name("slash/name"));
    assert!(!is_valid_tool_name("é"));
}

#[test]
fn list_tools_result_and_params() {
    let r: ListToolsResult = round_trip(json!({
        "tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},
                  "execution":{"taskSupport":"optional"},"outputSchema":{"type":"array"}}],
        "nextCursor":"abc","ttlMs":0,"cacheScope":"public","resultType":"complete"
    }));
    assert_eq!(
        r.tools[0].annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let _: ListToolsParams = round_trip(json!({"cursor":"abc","_meta":{"progressToken":3}}));
}

#[test]
fn a_blocks_tag_is_read_wherever_it_stands_and_only_once() {
    let block = |text: &str| serde_json::from_str::<ContentBlock>(text).unwrap();
    let text_of = |b: &ContentBlock| match b {
        ContentBlock::Text(t) => Some((t.text.clone(), t.extra.len())),
        _ => None,
    };
    // First (as servers write it), later, spaced, escaped: the same text block, with
    // the tag kept by the union, not in the case's `extra`.
    for written in [
        r#"{"type":"text","text":"hi","x":1}"#,
        r#"{"text":"hi","type":"text","x":1}"#,
        r#"{ "type" : "text", "text":"hi","x":1}"#,
        r#"{"type":"te\u0078t","text":"hi","x":1}"#,
    ] {
        let b = block(written);
        assert_eq!(text_of(&b), Some(("hi".to_owned(), 1)), "{written}");
        let again = serde_json::to_value(&b).unwrap();
        assert_eq!(
            again,
            json!({"type": "text", "text": "hi", "x": 1}),
            "{written}"
        );
    }
    assert_eq!(
        text_of(&block(r#"{"type":"text","text":"a\"b"}"#))
            .unwrap()
            .0,
        "a\"b"
    );
    // A tag given twice says two things: the block is kept raw, as any it cannot read.
    for twice in [
        r#"{"type":"text","type":"image","text":"hi"}"#,
        r#"{"type":"text","text":"hi","type":"text"}"#,
    ] {
        assert!(matches!(block(twice), ContentBlock::Unknown(_)), "{twice}");
    }
    // Nor does its name depend on where the block's first member stands.
    for twice in [
        r#"{"type":"foo","type":"text","text":"hi"}"#,
        r#"{ "type":"foo","type":"text","text":"hi"}"#,
    ] {
        assert_eq!(block(twice).type_name(), "", "{twice}");
    }
    // A prefix that only looks like a tag is read by the full parse.
    assert!(matches!(
        block(r#"{"type":"text"}"#),
        ContentBlock::Unknown(_)
    ));
    assert_eq!(
        block(r#"{"type":"image","data":"aGk=","mimeType":"image/png"}"#).type_name(),
        "image"
    );
}
