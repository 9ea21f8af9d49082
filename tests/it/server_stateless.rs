//! The test server's 2026-07-28 era (and both eras on one endpoint), by hand over HTTP/1.1.

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::server_http::{ACCEPT, Conn, JSON, MODERN, Session, modern_call, modern_rpc, rpc};

fn stateless() -> TestServer {
    TestServer::start(ServerConfig::new(Era::Stateless))
}

#[test]
fn discover_lists_only_the_modern_version() {
    let server = stateless();
    let resp = modern_call(
        &mut Conn::open(server.addr()),
        1,
        "server/discover",
        None,
        json!({}),
    );
    assert_eq!(resp.status, 200);
    let result = &resp.json()["result"];
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert_eq!(result["resultType"], "complete");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string());
}

#[test]
fn tools_call_with_matching_headers_succeeds_and_is_recorded() {
    let server = stateless();
    let mut conn = Conn::open(server.addr());
    let params = json!({"name": "structured", "arguments": {"a": 2, "b": 40}});
    let resp = modern_call(&mut conn, 5, "tools/call", Some("structured"), params);
    assert_eq!(resp.status, 200);
    assert!(
        resp.header("mcp-session-id").is_none(),
        "no sessions in this era"
    );
    let result = &resp.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["structuredContent"], json!({"sum": 42}));
    assert_eq!(result["content"][0]["text"], r#"{"sum":42}"#);

    let stats = server.stats();
    let call = stats
        .with_method("tools/call")
        .next()
        .expect("the call was recorded");
    assert_eq!(call.protocol_version.as_deref(), Some(MODERN));
    assert_eq!(call.mcp_method.as_deref(), Some("tools/call"));
    assert_eq!(call.mcp_name.as_deref(), Some("structured"));
    assert_eq!(call.id, Some(json!(5)));
    assert!(stats.sessions_opened.is_empty());
}

/// Posts `body` with `headers` and returns (HTTP status, JSON-RPC error code).
fn rejected(conn: &mut Conn, headers: &[(&str, &str)], body: &str) -> (u16, i64) {
    let resp = conn.call("POST", headers, Some(body));
    let code = resp.json()["error"]["code"]
        .as_i64()
        .expect("a JSON-RPC error");
    (resp.status, code)
}

#[test]
fn envelope_and_header_errors_use_the_2026_codes() {
    let server = stateless();
    let mut c = Conn::open(server.addr());
    let call = modern_rpc(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    let good = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];

    assert_eq!(
        rejected(&mut c, &good[..4], &call),
        (400, -32020),
        "Mcp-Name missing"
    );
    assert_eq!(
        rejected(
            &mut c,
            &[
                ACCEPT,
                JSON,
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "echo")
            ],
            &call
        ),
        (400, -32020),
        "version header missing"
    );
    let wrong_method = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "echo"),
    ];
    assert_eq!(rejected(&mut c, &wrong_method, &call), (400, -32020));
    let wrong_name = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "ech0"),
    ];
    assert_eq!(rejected(&mut c, &wrong_name, &call), (400, -32020));
    let other_version = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    assert_eq!(
        rejected(&mut c, &other_version, &call),
        (400, -32020),
        "header differs from _meta"
    );

    let no_meta = rpc(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    assert_eq!(rejected(&mut c, &good, &no_meta), (400, -32602));

    let old = rpc(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
        "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    let resp = c.call("POST", &other_version, Some(&old));
    assert_eq!(resp.status, 400);
    let err = &resp.json()["error"];
    assert_eq!(err["code"], -32022);
    assert_eq!(
        err["data"],
        json!({"supported": [MODERN], "requested": "2025-11-25"})
    );

    let init = rpc(
        4,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(rejected(&mut c, &[ACCEPT, JSON], &init), (400, -32022));

    let ping = modern_rpc(5, "ping", json!({}));
    let ping_headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "ping"),
    ];
    assert_eq!(rejected(&mut c, &ping_headers, &ping), (404, -32601));

    let unknown = modern_rpc(6, "tools/call", json!({"name": "nope", "arguments": {}}));
    let unknown_headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "nope"),
    ];
    assert_eq!(rejected(&mut c, &unknown_headers, &unknown), (400, -32602));

    // The base64 form of Mcp-Name decodes to the body's name.
    let b64 = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "=?base64?ZWNobw==?="),
    ];
    assert_eq!(c.call("POST", &b64, Some(&call)).status, 200);

    assert_eq!(
        c.call("DELETE", &[("Mcp-Session-Id", "x")], None).status,
        405
    );
    assert_eq!(
        c.call("GET", &[("Accept", "text/event-stream")], None)
            .status,
        405
    );
    assert_eq!(server.stats().connections, 1);
}

#[test]
fn progress_streams_in_the_2026_era() {
    let server = stateless();
    let params = json!({"name": "progress", "arguments": {"steps": 2, "delay_ms": 0}, "_meta": {"progressToken": 9}});
    let resp = modern_call(
        &mut Conn::open(server.addr()),
        3,
        "tools/call",
        Some("progress"),
        params,
    );
    assert!(resp.is_sse());
    let msgs = resp.sse();
    let progress: Vec<_> = msgs[..2]
        .iter()
        .map(|m| {
            (
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].clone(),
            )
        })
        .collect();
    assert_eq!(progress, vec![(json!(9), json!(1)), (json!(9), json!(2))]);
    assert_eq!(msgs[2]["result"]["resultType"], "complete");
    assert_eq!(msgs.len(), 3);
}

#[test]
fn elicit_answers_input_required() {
    let server = stateless();
    let resp = modern_call(
        &mut Conn::open(server.addr()),
        4,
        "tools/call",
        Some("elicit"),
        json!({"name": "elicit", "arguments": {}}),
    );
    let result = &resp.json()["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert!(result["requestState"].is_string());
}

#[test]
fn both_eras_share_one_endpoint() {
    let server = TestServer::start(ServerConfig::new(Era::Both));
    let mut s = Session::open(server.addr());
    let legacy = s
        .post(&rpc(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "old"}}),
        ))
        .json();
    assert_eq!(legacy["result"]["content"][0]["text"], "old");
    assert!(legacy["result"].get("resultType").is_none());

    let mut conn = Conn::open(server.addr());
    let discover = modern_call(&mut conn, 1, "server/discover", None, json!({})).json();
    assert_eq!(discover["result"]["supportedVersions"][0], MODERN);
    let modern = modern_call(
        &mut conn,
        2,
        "tools/call",
        Some("echo"),
        json!({"name": "echo", "arguments": {"text": "new"}}),
    )
    .json();
    assert_eq!(modern["result"]["content"][0]["text"], "new");
    assert_eq!(modern["result"]["resultType"], "complete");

    // A probe without session or modern markers is a handshake-era request: 400 -32000.
    let bare = conn.call(
        "POST",
        &[ACCEPT, JSON],
        Some(&rpc(3, "server/discover", json!({}))),
    );
    assert_eq!(
        (bare.status, bare.json()["error"]["code"].clone()),
        (400, json!(-32000))
    );
    assert_eq!(server.stats().sessions_opened.len(), 1);
}
