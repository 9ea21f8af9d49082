//! The conformance client against the project's own test server, in both eras, so
//! `cargo test` covers it without Node or the suite.

use brain_mcp_proto::version::ProtocolVersion;
use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::Value;

use super::scenarios::{Run, run};

fn run_for(server: &TestServer, scenario: &str, version: ProtocolVersion) -> Run {
    Run {
        scenario: scenario.to_owned(),
        version,
        context: Value::Null,
        url: server.url(),
    }
}

/// Lists and calls every demo tool, `elicit` included: its question is answered by
/// the defaults responder, on the SSE stream (handshake) or in an `input_required`
/// retry (2026).
#[tokio::test]
async fn calls_every_demo_tool_in_both_eras() {
    for (era, reply, version) in [
        (Era::Handshake, Reply::Json, ProtocolVersion::V2025_11_25),
        (Era::Handshake, Reply::Sse, ProtocolVersion::V2025_06_18),
        (Era::Stateless, Reply::Json, ProtocolVersion::V2026_07_28),
        (Era::Stateless, Reply::Sse, ProtocolVersion::V2026_07_28),
    ] {
        let server = TestServer::start(ServerConfig {
            fault_tools: false,
            ..ServerConfig::new(era).reply(reply)
        });
        let outcome = run(&run_for(
            &server,
            "elicitation-sep1034-client-defaults",
            version,
        ))
        .await;
        assert!(outcome.is_ok(), "{era:?} {reply:?}: {outcome:?}");
    }
}

/// A scenario that needs a tool the server lacks fails with the tool's name.
#[tokio::test]
async fn a_missing_tool_fails_the_run() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let outcome = run(&run_for(
        &server,
        "tools_call",
        ProtocolVersion::V2026_07_28,
    ))
    .await;
    let message = outcome
        .map_err(|e| e.to_string())
        .expect_err("no add_numbers tool");
    assert!(message.contains("add_numbers"), "{message}");
}
