//! The runner against the project's own test server, in both eras, so `cargo test` covers
//! it without Node or the suite.

use brain_mcp_proto::version::ProtocolVersion;
use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::Value;

use crate::scenarios::{Run, run};

/// Lists and calls every demo tool through Brain's path, `elicit` included: the stand-in
/// user answers it on the reply stream (handshake) or in an `input_required` retry (2026).
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
        let asked = Run {
            scenario: "sep-2322-client-request-state".into(),
            version,
            context: Value::Null,
            url: server.url(),
        };
        let outcome = run(&asked).await;
        assert_eq!(outcome, Ok(()), "{era:?} {reply:?}");
        let stats = server.stats();
        assert!(stats.count("tools/call") >= 6, "{era:?}: every tool called");
        assert_eq!(stats.sessions_opened.len(), stats.sessions_deleted.len());
    }
}

/// Without the stand-in user, the same `elicit` fails the step: Brain's bindings have none.
#[tokio::test]
async fn without_a_user_input_requests_fail_the_step() {
    let server = TestServer::start(ServerConfig {
        fault_tools: false,
        ..ServerConfig::new(Era::Stateless)
    });
    let asked = Run {
        scenario: "any-other-scenario".into(),
        version: ProtocolVersion::V2026_07_28,
        context: Value::Null,
        url: server.url(),
    };
    let outcome = run(&asked).await;
    assert!(
        outcome
            .as_ref()
            .is_err_and(|e| e.contains("elicit: user_input_required")),
        "{outcome:?}"
    );
}
