//! Failures after `tools/call` was sent (`unknown_outcome` true) against the fault server,
//! in both eras, and the sessions they leave behind.

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{
    Harness, SETTLE, assert_failure, binding, call, progress, spec, success,
};

const ERAS: [Era; 2] = [Era::Handshake, Era::Stateless];

/// Calls `tool` once on a fresh server of `era`; returns the result JSON and the server.
async fn once(era: Era, tool: &str, args: Value) -> (Value, TestServer) {
    let server = TestServer::start(ServerConfig::new(era));
    let h = Harness::new();
    let out = call(&h, &binding(spec(tool, &server.url(), tool)), "f-1", args).await;
    h.flush().await;
    (out.result, server)
}

/// Every handshake session the server opened was deleted.
fn sessions_closed(server: &TestServer) {
    let stats = server.stats();
    assert_eq!(stats.sessions_opened, stats.sessions_deleted, "{stats:?}");
}

#[tokio::test]
async fn a_dropped_connection_is_connection_lost() {
    for era in ERAS {
        let (result, server) = once(era, "drop_mid", json!({})).await;
        assert_failure(&result, "connection_lost", true);
        assert_eq!(server.stats().count("tools/call"), 1);
        sessions_closed(&server);
    }
}

#[tokio::test]
async fn a_json_rpc_error_is_rpc_error() {
    for era in ERAS {
        let (result, server) = once(era, "rpc_error", json!({})).await;
        let message = assert_failure(&result, "rpc_error", true);
        assert!(message.contains("-32603"), "{era:?}: {message}");
        sessions_closed(&server);
        // The call was answered, so there is nothing to cancel.
        assert!(server.stats().cancelled_request_ids().is_empty());
        // A tool the server does not know is also answered with a JSON-RPC error.
        let (result, _) = once(era, "no_such_tool", json!({})).await;
        assert_failure(&result, "rpc_error", true);
    }
}

#[tokio::test]
async fn requests_for_user_input_are_refused_and_fail_the_call() {
    for (era, tool, method) in [
        (Era::Handshake, "elicit", "elicitation/create"),
        (Era::Handshake, "sampling", "sampling/createMessage"),
        (Era::Handshake, "roots", "roots/list"),
    ] {
        let (result, server) = once(era, tool, json!({})).await;
        let message = assert_failure(&result, "user_input_required", true);
        assert!(message.contains(method), "{message}");
        // The request was answered with an error, so the server could unwind.
        let (stats, held) = server
            .wait_for(SETTLE, |s| !s.client_answers.is_empty())
            .await;
        assert!(held, "{tool}: no answer reached the server");
        assert_eq!(stats.client_answers.len(), 1);
        let (answered, answer) = &stats.client_answers[0];
        assert_eq!(answered, method);
        assert!(answer.get("error").is_some(), "{answer}");
        assert!(answer.get("result").is_none(), "{answer}");
        sessions_closed(&server);
    }
    // The 2026 era asks with an input_required result instead; Brain gives no input.
    let (result, server) = once(Era::Stateless, "elicit", json!({})).await;
    let message = assert_failure(&result, "user_input_required", true);
    assert!(message.contains("input_required"), "{message}");
    assert_eq!(server.stats().count("tools/call"), 1, "not retried");
}

#[tokio::test]
async fn a_server_ping_is_answered_and_the_call_succeeds() {
    let (result, server) = once(Era::Handshake, "ping_first", json!({})).await;
    let text = json!([{"type": "text", "text": "pong received"}]);
    assert_eq!(result, success("f-1", text, None));
    let stats = server.stats();
    assert_eq!(stats.client_answers.len(), 1);
    assert_eq!(stats.client_answers[0].0, "ping");
    assert_eq!(stats.client_answers[0].1["result"], json!({}));
    sessions_closed(&server);
}

#[tokio::test]
async fn other_content_types_are_unsupported() {
    for era in ERAS {
        for (tool, named) in [("audio", "audio"), ("resource_link", "resource_link")] {
            let (result, server) = once(era, tool, json!({})).await;
            let message = assert_failure(&result, "unsupported_content", true);
            assert!(message.contains(named), "{message}");
            sessions_closed(&server);
        }
    }
}

#[tokio::test]
async fn output_over_max_output_bytes_is_output_too_large() {
    for era in ERAS {
        let server = TestServer::start(ServerConfig::new(era));
        let h = Harness::new();
        let mut small = spec("huge", &server.url(), "huge");
        small["max_output_bytes"] = json!(1000);
        let small = binding(small);
        // Just over the limit: read in full, refused by the exact limit.
        let out = call(&h, &small, "big-1", json!({"bytes": 2000})).await;
        assert_failure(&out.result, "output_too_large", true);
        // Far over: reading stops at the budget and the connection is closed, so the
        // server cannot deliver the rest (memory stays bounded).
        let out = call(&h, &small, "big-2", json!({"bytes": 200_000_000})).await;
        assert_failure(&out.result, "output_too_large", true);
        h.flush().await;
        let (stats, held) = server
            .wait_for(SETTLE, |s| !s.abandoned_streams.is_empty())
            .await;
        assert!(
            held,
            "{era:?}: the huge reply was read to its end: {stats:?}"
        );
        assert_eq!(stats.sessions_opened, stats.sessions_deleted);
    }
}

#[tokio::test]
async fn structured_content_breaking_the_output_schema_is_a_mismatch() {
    for era in ERAS {
        let server = TestServer::start(ServerConfig::new(era));
        let h = Harness::new();
        let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}},
            "required": ["sum"]});
        let mut bad = spec("bad_structured", &server.url(), "bad_structured");
        bad["output_schema"] = schema.clone();
        let out = call(&h, &binding(bad), "bad-1", json!({})).await;
        let message = assert_failure(&out.result, "output_schema_mismatch", true);
        assert!(message.contains("output_schema"), "{message}");
        // The same schema accepts the well-formed tool.
        let mut good = spec("structured", &server.url(), "structured");
        good["output_schema"] = schema;
        let out = call(&h, &binding(good), "good-1", json!({"a": 1, "b": 2})).await;
        let text = json!([{"type": "text", "text": "{\"sum\":3}"}]);
        assert_eq!(out.result, success("good-1", text, Some(json!({"sum": 3}))));
        h.flush().await;
        sessions_closed(&server);
    }
}

#[tokio::test]
async fn progress_that_does_not_increase_is_dropped() {
    for era in ERAS {
        let server = TestServer::start(ServerConfig::new(era));
        let h = Harness::new();
        let out = call(
            &h,
            &binding(spec("bp", &server.url(), "bad_progress")),
            "bp",
            json!({}),
        )
        .await;
        let expected: Vec<Value> = [1, 3, 4]
            .iter()
            .map(|v| progress("bp", *v, Some(4), Some(&format!("value {v}"))))
            .collect();
        assert_eq!(out.progress, expected, "{era:?}");
        let text = json!([{"type": "text", "text": "done"}]);
        assert_eq!(out.result, success("bp", text, None));
        // Log notifications are not progress and do not disturb the call.
        let out = call(
            &h,
            &binding(spec("log", &server.url(), "logging")),
            "lg",
            json!({}),
        )
        .await;
        assert!(out.progress.is_empty());
        let text = json!([{"type": "text", "text": "logged"}]);
        assert_eq!(out.result, success("lg", text, None));
    }
}

#[tokio::test]
async fn sse_framing_and_priming_events_change_nothing() {
    for era in ERAS {
        let mut config = ServerConfig::new(era).reply(Reply::Sse);
        config.sse_priming = true;
        let server = TestServer::start(config);
        let h = Harness::new();
        let echo = binding(spec("echo", &server.url(), "echo"));
        let out = call(&h, &echo, "sse-1", json!({"text": "framed"})).await;
        let text = json!([{"type": "text", "text": "framed"}]);
        assert_eq!(out.result, success("sse-1", text, None), "{era:?}");
        let prog = binding(spec("progress", &server.url(), "progress"));
        let out = call(&h, &prog, "sse-2", json!({"steps": 2, "delay_ms": 0})).await;
        assert_eq!(out.progress.len(), 2, "{era:?}: {:?}", out.progress);
        assert_eq!(out.result["is_error"], false);
        for (tool, kind) in [("drop_mid", "connection_lost"), ("rpc_error", "rpc_error")] {
            let b = binding(spec(tool, &server.url(), tool));
            let out = call(&h, &b, "sse-3", json!({})).await;
            assert_failure(&out.result, kind, true);
        }
        let mut huge = spec("huge", &server.url(), "huge");
        huge["max_output_bytes"] = json!(1000);
        let out = call(&h, &binding(huge), "sse-4", json!({"bytes": 10_000_000})).await;
        assert_failure(&out.result, "output_too_large", true);
        h.flush().await;
        sessions_closed(&server);
    }
}

#[tokio::test]
async fn stateless_server_requests_fail_the_call_at_once() {
    // A 2026 client has no way to answer a request, so a ping fails the call as the
    // protocol breach it is instead of waiting out the 30 s timeout.
    let started = std::time::Instant::now();
    let (result, server) = once(Era::Stateless, "ping_first", json!({})).await;
    let message = assert_failure(&result, "protocol_error", true);
    assert!(message.contains("ping"), "{message}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        server.stats().client_answers.is_empty(),
        "nothing to answer with"
    );
    for (tool, method) in [
        ("sampling", "sampling/createMessage"),
        ("roots", "roots/list"),
    ] {
        let (result, server) = once(Era::Stateless, tool, json!({})).await;
        let message = assert_failure(&result, "user_input_required", true);
        assert!(message.contains(method), "{message}");
        assert_eq!(server.stats().count("tools/call"), 1);
    }
}

#[tokio::test]
async fn a_progress_flood_does_not_spend_the_output_budget() {
    for era in ERAS {
        let server = TestServer::start(ServerConfig::new(era));
        let h = Harness::new();
        // 10,000 notifications (over 1 MB) before a 4-byte result, under a 100-byte limit.
        let mut chatty = spec("progress", &server.url(), "progress");
        chatty["max_output_bytes"] = json!(100);
        let args = json!({"steps": 10_000, "delay_ms": 0});
        let out = call(&h, &binding(chatty), "chatty", args).await;
        assert_eq!(out.result["is_error"], false, "{era:?}: {}", out.result);
        assert_eq!(out.progress.len(), 10_000, "{era:?}");
        for (i, event) in out.progress.iter().enumerate() {
            assert_eq!(event["progress"], json!(i + 1));
        }
        h.flush().await;
        sessions_closed(&server);
    }
}

#[tokio::test]
async fn a_non_ascii_tool_name_travels_in_the_mcp_name_header() {
    // The server checks Mcp-Name against the body: a wrongly encoded header would be -32020
    // (header mismatch); a well encoded one reaches the tool lookup.
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let h = Harness::new();
    let intl = binding(spec("intl", &server.url(), "échø-工具"));
    let out = call(&h, &intl, "intl", json!({})).await;
    let message = assert_failure(&out.result, "rpc_error", true);
    assert!(message.contains("Unknown tool: échø-工具"), "{message}");
    let stats = server.stats();
    let sent = stats.with_method("tools/call").next().expect("the call");
    assert!(
        sent.mcp_name.as_deref().is_some_and(|n| n.is_ascii()),
        "{sent:?}"
    );
}
