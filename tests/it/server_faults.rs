//! The test server's fault tools and config faults, and the stats they leave behind.

use std::io::Read;
use std::time::{Duration, Instant};

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::server_http::{
    ACCEPT, Conn, JSON, MODERN, Session, SseReader, modern_call, modern_rpc, rpc,
};

fn stateless() -> TestServer {
    TestServer::start(ServerConfig::new(Era::Stateless))
}

fn call_tool(server: &TestServer, id: u64, name: &str, args: Value) -> crate::server_http::Resp {
    let params = json!({"name": name, "arguments": args});
    modern_call(
        &mut Conn::open(server.addr()),
        id,
        "tools/call",
        Some(name),
        params,
    )
}

/// Opens a 2026-era `tools/call` whose body is read as it streams.
fn stream_tool(server: &TestServer, id: u64, name: &str, args: Value) -> impl Read + use<> {
    let headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    let body = modern_rpc(id, "tools/call", json!({"name": name, "arguments": args}));
    let (status, _, body) = Conn::open(server.addr()).stream(&headers, &body);
    assert_eq!(status, 200);
    body
}

/// Waits until `check` holds on the server's stats.
fn eventually(
    server: &TestServer,
    what: &str,
    check: impl Fn(&brain_tests::server::Stats) -> bool,
) {
    let start = Instant::now();
    while !check(&server.stats()) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "timed out waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn huge_sends_exactly_the_requested_size() {
    let server = stateless();
    let resp = call_tool(&server, 1, "huge", json!({"bytes": 3_000_000}));
    let text = resp.json()["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
        .len();
    assert_eq!(text, 3_000_000);
}

#[test]
fn huge_stops_producing_when_the_client_stops_reading() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless).reply(Reply::Sse));
    let mut body = stream_tool(&server, 2, "huge", json!({"bytes": 1u64 << 32}));
    let mut buf = vec![0u8; 256 * 1024];
    body.read_exact(&mut buf).expect("the first 256 KiB");
    assert!(buf.starts_with(b"event: message\ndata: {"), "SSE framing");
    drop(body);
    eventually(&server, "the abandoned stream", |s| {
        s.abandoned_streams == [json!(2)]
    });
}

#[test]
fn drop_mid_cuts_the_connection_inside_the_body() {
    let server = stateless();
    let mut conn = Conn::open(server.addr());
    let headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "drop_mid"),
    ];
    let body = modern_rpc(
        3,
        "tools/call",
        json!({"name": "drop_mid", "arguments": {}}),
    );
    let err = conn
        .try_call("POST", &headers, Some(&body))
        .expect_err("the body is cut");
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
}

#[test]
fn hang_keeps_the_stream_open_until_the_client_leaves() {
    let server = stateless();
    let mut sse = SseReader::new(stream_tool(&server, 4, "hang", json!({})));
    for _ in 0..2 {
        let line = sse.next_line().expect("a keep-alive");
        assert!(
            line.starts_with(':') || line.trim().is_empty(),
            "only comments: {line:?}"
        );
    }
    assert!(server.stats().abandoned_streams.is_empty());
    drop(sse);
    eventually(&server, "the closed stream", |s| {
        s.abandoned_streams == [json!(4)]
    });
}

#[test]
fn content_and_result_faults() {
    let server = stateless();
    let first = |resp: crate::server_http::Resp| resp.json()["result"].clone();
    assert_eq!(
        first(call_tool(&server, 1, "audio", json!({})))["content"][0]["type"],
        "audio"
    );
    let link = first(call_tool(&server, 2, "resource_link", json!({})));
    assert_eq!(link["content"][0]["type"], "resource_link");
    let bad = first(call_tool(&server, 3, "bad_structured", json!({})));
    assert!(bad["structuredContent"]["sum"].is_string());
    assert_eq!(
        first(call_tool(&server, 4, "fail", json!({})))["isError"],
        true
    );

    let rpc_error = call_tool(&server, 5, "rpc_error", json!({}));
    assert_eq!(rpc_error.json()["error"]["code"], -32603);
    assert_eq!(rpc_error.json()["id"], 5);

    let start = Instant::now();
    let slow = first(call_tool(&server, 6, "slow", json!({"ms": 60})));
    assert!(start.elapsed() >= Duration::from_millis(60));
    assert_eq!(slow["content"][0]["text"], "slept 60 ms");

    let bad_args = call_tool(&server, 7, "slow", json!({"ms": "soon"}));
    assert_eq!(
        (bad_args.status, bad_args.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
}

#[test]
fn fault_tools_can_be_hidden() {
    let server = TestServer::start(ServerConfig {
        fault_tools: false,
        ..ServerConfig::new(Era::Stateless)
    });
    let list = modern_call(
        &mut Conn::open(server.addr()),
        1,
        "tools/list",
        None,
        json!({}),
    )
    .json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, brain_tests::server::DEMO_TOOLS);
    assert_eq!(
        call_tool(&server, 2, "hang", json!({})).status,
        400,
        "hidden tools are unknown"
    );
}

#[test]
fn ping_first_needs_the_clients_answer() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let s = Session::open(server.addr());
    let mut answers = Session {
        conn: Conn::open(server.addr()),
        id: s.id.clone(),
        version: s.version.clone(),
    };
    let headers: Vec<(String, String)> = s
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (_, _, body) = s.conn.stream(
        &headers,
        &rpc(
            8,
            "tools/call",
            json!({"name": "ping_first", "arguments": {}}),
        ),
    );
    let mut sse = SseReader::new(body);
    let ping = sse.next_message().expect("a ping");
    assert_eq!(ping["method"], "ping");
    let answer = json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}});
    assert_eq!(answers.post(&answer.to_string()).status, 202);
    let result = sse.next_message().expect("the result");
    assert_eq!(result["result"]["content"][0]["text"], "pong received");
    assert_eq!(server.stats().client_answers[0].0, "ping");
}

#[test]
fn idle_connections_are_closed_when_configured() {
    let config = ServerConfig {
        close_idle_after: Some(Duration::from_millis(100)),
        ..ServerConfig::new(Era::Stateless)
    };
    let server = TestServer::start(config);
    let mut conn = Conn::open(server.addr());
    // A request that outlives the idle limit keeps its connection.
    let params = json!({"name": "slow", "arguments": {"ms": 250}});
    assert_eq!(
        modern_call(&mut conn, 1, "tools/call", Some("slow"), params).status,
        200
    );
    assert!(
        conn.closed_within(Duration::from_secs(2)),
        "closed once idle"
    );

    let keep = stateless();
    let mut conn = Conn::open(keep.addr());
    assert_eq!(
        modern_call(&mut conn, 1, "server/discover", None, json!({})).status,
        200
    );
    assert!(
        !conn.closed_within(Duration::from_millis(300)),
        "kept alive by default"
    );
}

#[test]
fn server_requests_and_odd_notifications() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let s = Session::open(server.addr());
    let mut answers = Session {
        conn: Conn::open(server.addr()),
        id: s.id.clone(),
        version: s.version.clone(),
    };
    let headers: Vec<(String, String)> = s
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for (i, (tool, method)) in [
        ("sampling", "sampling/createMessage"),
        ("roots", "roots/list"),
    ]
    .into_iter()
    .enumerate()
    {
        let c = Conn::open(server.addr());
        let (_, _, body) = c.stream(
            &headers,
            &rpc(
                20 + i as u64,
                "tools/call",
                json!({"name": tool, "arguments": {}}),
            ),
        );
        let mut sse = SseReader::new(body);
        let ask = sse.next_message().expect("a server request");
        assert_eq!(ask["method"], method);
        let refuse = json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32601, "message": "not supported"}});
        assert_eq!(answers.post(&refuse.to_string()).status, 202);
        let result = sse.next_message().expect("the result");
        assert_eq!(result["result"]["isError"], true, "{tool}: {result}");
    }
    let methods: Vec<String> = server
        .stats()
        .client_answers
        .iter()
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(methods, ["sampling/createMessage", "roots/list"]);

    let mut s = s;
    let bad = s.post(&rpc(
        30,
        "tools/call",
        json!({"name": "bad_progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
    ));
    let values: Vec<Value> = bad
        .sse()
        .iter()
        .filter_map(|m| m.pointer("/params/progress").cloned())
        .collect();
    assert_eq!(values, [json!(1), json!(1), json!(3), json!(2), json!(4)]);

    let logged = s
        .post(&rpc(
            31,
            "tools/call",
            json!({"name": "logging", "arguments": {}}),
        ))
        .sse();
    assert_eq!(logged[0]["method"], "notifications/message");
    assert_eq!(logged[1]["result"]["content"][0]["text"], "logged");
}
