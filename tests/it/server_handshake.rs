//! The test server's handshake era, driven by hand over raw HTTP/1.1.

use std::time::Duration;

use brain_tests::server::{DEMO_TOOLS, Era, FAULT_TOOLS, Reply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::server_http::{ACCEPT, Conn, JSON, Session, SseReader, rpc};

fn handshake() -> TestServer {
    TestServer::start(ServerConfig::new(Era::Handshake))
}

#[test]
fn initialize_call_then_delete_ends_the_session() {
    let server = handshake();
    let mut s = Session::open(server.addr());
    assert_eq!(s.version, "2025-11-25");
    assert!(s.id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{}", s.id);

    let call = rpc(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hello"}}),
    );
    let resp = s.post(&call);
    assert_eq!(resp.status, 200);
    let msg = resp.json();
    assert_eq!(msg["id"], 2);
    assert_eq!(
        msg["result"]["content"][0],
        json!({"type": "text", "text": "hello"})
    );
    assert_eq!(msg["result"]["isError"], false);

    let sid = s.id.clone();
    let delete = |conn: &mut Conn| {
        conn.call(
            "DELETE",
            &[
                ("Mcp-Session-Id", sid.as_str()),
                ("Authorization", "Bearer sekret"),
            ],
            None,
        )
    };
    assert_eq!(delete(&mut s.conn).status, 200);
    assert_eq!(
        delete(&mut s.conn).status,
        404,
        "a deleted session is unknown"
    );
    assert_eq!(
        s.post(&call).status,
        404,
        "requests on a deleted session get 404"
    );

    let stats = server.stats();
    assert_eq!(stats.sessions_opened, vec![sid.clone()]);
    assert_eq!(stats.sessions_deleted, vec![sid.clone()]);
    assert_eq!(
        &stats.methods()[..3],
        ["initialize", "notifications/initialized", "tools/call"]
    );
    assert_eq!(stats.deletes(), vec![Some(sid.clone()), Some(sid)]);
    let del = stats
        .received
        .iter()
        .find(|r| r.http_method == "DELETE")
        .expect("a DELETE");
    assert_eq!(del.authorization.as_deref(), Some("Bearer sekret"));
    assert!(
        !format!("{del:?}").contains("sekret"),
        "Debug must redact the token"
    );
    assert_eq!(
        stats.connections, 1,
        "one kept-alive connection carried everything"
    );
}

#[test]
fn version_negotiation_echoes_known_and_counters_unknown() {
    let server = handshake();
    let mut conn = Conn::open(server.addr());
    for (offered, expected) in [("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")] {
        let init = rpc(
            1,
            "initialize",
            json!({"protocolVersion": offered, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        let resp = conn.call("POST", &[ACCEPT, JSON], Some(&init));
        assert_eq!(resp.json()["result"]["protocolVersion"], expected);
    }
    assert_eq!(server.stats().sessions_opened.len(), 2);
}

#[test]
fn requests_without_a_valid_session_are_refused() {
    let server = handshake();
    let mut conn = Conn::open(server.addr());
    let discover = rpc(1, "server/discover", json!({}));
    let resp = conn.call(
        "POST",
        &[ACCEPT, JSON, ("MCP-Protocol-Version", "2026-07-28")],
        Some(&discover),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json()["error"]["code"], -32000);

    let list = rpc(2, "tools/list", json!({}));
    let resp = conn.call(
        "POST",
        &[ACCEPT, JSON, ("Mcp-Session-Id", "nope")],
        Some(&list),
    );
    assert_eq!(resp.status, 404);
    assert_eq!(
        conn.call("DELETE", &[], None).status,
        400,
        "DELETE without a session"
    );

    let resp = conn.call("POST", &[("Accept", "application/json"), JSON], Some(&list));
    assert_eq!(resp.status, 406, "Accept must list both types");
    assert_eq!(
        conn.call("GET", &[("Accept", "text/event-stream")], None)
            .status,
        405
    );
}

#[test]
fn progress_arrives_over_sse_before_the_result() {
    let server = handshake();
    let mut s = Session::open(server.addr());
    let call = rpc(
        7,
        "tools/call",
        json!({"name": "progress", "arguments": {"steps": 3, "delay_ms": 1}, "_meta": {"progressToken": "call-7"}}),
    );
    let resp = s.post(&call);
    assert!(resp.is_sse(), "progress forces SSE: {resp:?}");
    let msgs = resp.sse();
    assert_eq!(msgs.len(), 4);
    for (i, note) in msgs[..3].iter().enumerate() {
        assert_eq!(note["method"], "notifications/progress");
        let p = &note["params"];
        assert_eq!(p["progressToken"], "call-7");
        assert_eq!(p["progress"], i as u64 + 1);
        assert_eq!(p["total"], 3);
        assert_eq!(p["message"], format!("step {}", i + 1));
    }
    assert_eq!(msgs[3]["id"], 7);
    assert_eq!(msgs[3]["result"]["content"][0]["text"], "done");
}

#[test]
fn elicitation_waits_for_the_clients_answer() {
    let server = handshake();
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
    let call = rpc(3, "tools/call", json!({"name": "elicit", "arguments": {}}));
    let (status, _, body) = s.conn.stream(&headers, &call);
    assert_eq!(status, 200);
    let mut sse = SseReader::new(body);
    let ask = sse.next_message().expect("an elicitation request");
    assert_eq!(ask["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32601, "message": "no elicitation here"}});
    assert_eq!(answers.post(&answer.to_string()).status, 202);
    let result = sse.next_message().expect("the call's result");
    assert_eq!(result["id"], 3);
    assert_eq!(result["result"]["isError"], true);
    let stats = server.stats();
    assert_eq!(stats.client_answers.len(), 1);
    assert_eq!(stats.client_answers[0].0, "elicitation/create");
    assert_eq!(stats.client_answers[0].1["error"]["code"], -32601);
}

#[test]
fn tools_list_pages_through_next_cursor() {
    let server = TestServer::start(ServerConfig {
        page_size: Some(4),
        ..ServerConfig::new(Era::Handshake)
    });
    let mut s = Session::open(server.addr());
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        assert!(page < 10, "pagination must end");
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let result = s.post(&rpc(page + 2, "tools/list", params)).json()["result"].clone();
        let tools = result["tools"].as_array().expect("tools").clone();
        assert!(tools.len() <= 4);
        names.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().expect("name").to_owned()),
        );
        cursor = result.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    let expected: Vec<&str> = DEMO_TOOLS.iter().chain(FAULT_TOOLS).copied().collect();
    assert_eq!(names, expected);
    let bad = s
        .post(&rpc(99, "tools/list", json!({"cursor": "zzz"})))
        .json();
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn sse_replies_and_priming_events_when_configured() {
    let config = ServerConfig {
        sse_priming: true,
        ..ServerConfig::new(Era::Handshake).reply(Reply::Sse)
    };
    let server = TestServer::start(config);
    let mut s = Session::open(server.addr());
    let resp = s.post(&rpc(
        2,
        "tools/call",
        json!({"name": "image", "arguments": {}}),
    ));
    assert!(resp.is_sse());
    let text = String::from_utf8(resp.body.clone()).expect("utf-8");
    assert!(
        text.starts_with("id: ") && text.contains("\ndata: \n\n"),
        "priming event first: {text}"
    );
    let content = &resp.json()["result"]["content"][0];
    assert_eq!(content["type"], "image");
    assert_eq!(content["mimeType"], "image/png");
    assert_eq!(content["data"], brain_tests::server::IMAGE_PNG_BASE64);
}

#[test]
fn initialize_faults() {
    let failing = TestServer::start(ServerConfig {
        initialize_fails: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let resp = Conn::open(failing.addr()).call("POST", &[ACCEPT, JSON], Some(&init));
    assert_eq!(resp.status, 500);
    assert!(failing.stats().sessions_opened.is_empty());

    let stalling = TestServer::start(ServerConfig {
        stall_initialize: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let mut conn = Conn::open(stalling.addr());
    conn.set_timeout(Duration::from_millis(300));
    let err = conn
        .try_call("POST", &[ACCEPT, JSON], Some(&init))
        .expect_err("no answer to initialize");
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{err}"
    );
    assert_eq!(
        stalling.stats().count("initialize"),
        1,
        "the request did arrive"
    );
}
