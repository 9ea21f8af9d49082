//! The responder hook `brain-mcp-bind` offers applications that have a user: requests for
//! user input reach it in both eras, and its answers reach the server. Brain's own
//! bindings have none and keep failing such calls (`call_faults.rs`).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use brain_mcp_bind::{Refusal, Responder, ServerRequest};
use brain_mcp_proto::jsonrpc::ErrorCode;
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{TENANT, call_elicit_with};

/// Confirms every form with `{"ok": true}` and records what it was asked.
#[derive(Default)]
struct Confirming {
    asked: Mutex<Vec<(String, Value)>>,
}

#[async_trait]
impl Responder for Confirming {
    async fn answer(&self, request: &ServerRequest<'_>) -> Result<Value, Refusal> {
        let params = request
            .params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        // Whose call it is comes with every request.
        let whose = format!("{}/{}/{}", request.tenant, request.call_id, request.tool);
        self.asked
            .lock()
            .expect("the log")
            .push((format!("{whose} {}", request.method), params));
        match request.method {
            "elicitation/create" => Ok(json!({"action": "accept", "content": {"ok": true}})),
            other => Err(Refusal::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("no {other}"),
            )),
        }
    }
}

async fn call_elicit(era: Era) -> (Value, Arc<Confirming>, TestServer) {
    let server = TestServer::start(ServerConfig::new(era));
    let responder = Arc::new(Confirming::default());
    let result = call_elicit_with(&server.url(), responder.clone(), "r-1").await;
    (
        serde_json::to_value(result).expect("JSON"),
        responder,
        server,
    )
}

#[tokio::test]
async fn a_handshake_era_elicitation_reaches_the_responder_and_its_answer_the_server() {
    let (result, responder, server) = call_elicit(Era::Handshake).await;
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "accepted: {\"ok\":true}");
    let asked = responder.asked.lock().expect("the log").clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].0,
        format!("{TENANT}/r-1/elicit elicitation/create")
    );
    assert_eq!(asked[0].1["message"], "Proceed with the action?");
    // The client declared the capability it answers for.
    let stats = server.stats();
    let init = stats
        .received
        .iter()
        .find(|r| r.method.as_deref() == Some("initialize"))
        .expect("an initialize");
    assert_eq!(
        init.body["params"]["capabilities"]["elicitation"],
        json!({})
    );
    assert_eq!(stats.sessions_opened.len(), stats.sessions_deleted.len());
}

#[tokio::test]
async fn a_2026_input_required_round_is_answered_and_retried_once() {
    let (result, responder, server) = call_elicit(Era::Stateless).await;
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "got input: {\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}"
    );
    assert_eq!(responder.asked.lock().expect("the log").len(), 1);
    let stats = server.stats();
    let calls: Vec<_> = stats
        .received
        .iter()
        .filter(|r| r.method.as_deref() == Some("tools/call"))
        .collect();
    assert_eq!(
        calls.len(),
        2,
        "the first round, then one retry with the answers"
    );
    assert_ne!(calls[0].id, calls[1].id, "a new JSON-RPC id for the retry");
    assert!(calls[0].body["params"].get("inputResponses").is_none());
    assert_eq!(calls[1].body["params"]["requestState"], "elicit-round-1");
    assert_eq!(
        calls[1].body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"],
        json!({})
    );
}
