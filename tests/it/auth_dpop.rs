//! DPoP (RFC 9449) end to end: a binding that asks for DPoP-bound tokens proves
//! possession with a fresh proof on every request, its session's DELETE included;
//! nonces servers demand are honoured within bounds; a token bound without being asked
//! is refused; proofs are never shown.

use brain_tests::auth::{AuthConfig, TestAuthServer};
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Harness, assert_failure, binding, call, spec};

const CLIENT: &str = "brain-host";
/// The value of `CARGO_PKG_NAME` in this test process.
const SECRET: &str = env!("CARGO_PKG_NAME");

/// An authorization server issuing DPoP-bound tokens and an MCP server of `era` that
/// takes nothing else.
fn servers(era: Era) -> (TestAuthServer, TestServer) {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    auth.configure(|c| c.dpop = true);
    let server = TestServer::start(ServerConfig::new(era).hook(auth.dpop_guard()));
    auth.configure(|c| c.resource = server.url());
    (auth, server)
}

fn oauth_spec(server: &TestServer, issuer: &str, dpop: bool) -> Value {
    let mut spec = spec("echo", &server.url(), "echo");
    spec["oauth"] = json!({
        "issuer": issuer,
        "client_id": CLIENT,
        "client_secret_env": "CARGO_PKG_NAME",
        "dpop": dpop,
    });
    spec
}

#[tokio::test]
async fn every_request_carries_a_fresh_proof_its_delete_included() {
    let (auth, server) = servers(Era::Handshake);
    let echo = binding(oauth_spec(&server, &auth.url(), true));
    let h = Harness::new();
    for id in ["c1", "c2"] {
        let out = call(&h, &echo, id, json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    h.flush().await;
    // The token request carried a proof for the token endpoint.
    let token_requests = auth.token_requests();
    assert_eq!(token_requests.len(), 1);
    let proof = token_requests[0]
        .dpop
        .clone()
        .expect("a proof at the token endpoint");
    assert_eq!(proof.split('.').count(), 3);
    let proofs = auth.proofs();
    assert!(proofs.iter().all(|p| p.dpop_scheme), "DPoP, never Bearer");
    let mut jtis: Vec<&str> = proofs
        .iter()
        .filter_map(|p| p.claims["jti"].as_str())
        .collect();
    let count = jtis.len();
    jtis.sort_unstable();
    jtis.dedup();
    assert_eq!(jtis.len(), count, "no proof used twice");
    assert!(
        proofs
            .iter()
            .any(|p| p.http_method == "DELETE" && p.claims["htm"] == "DELETE"),
        "the session's DELETE had a proof of its own: {proofs:?}"
    );
    let stats = server.stats();
    assert_eq!(stats.count("tools/call"), 2);
    assert!(
        stats.received.iter().all(|r| r
            .authorization
            .as_deref()
            .is_some_and(|a| a.starts_with("DPoP "))
            || r.status == Some(401)),
        "every request the server took carried a DPoP-bound token"
    );
}

#[tokio::test]
async fn a_nonce_demanded_on_every_request_is_honoured_and_each_tool_runs_once() {
    for era in [Era::Handshake, Era::Stateless] {
        let (auth, server) = servers(era);
        auth.configure(|c| c.dpop_nonce_every_request = true);
        let echo = binding(oauth_spec(&server, &auth.url(), true));
        let h = Harness::new();
        for id in ["c1", "c2", "c3"] {
            let out = call(&h, &echo, id, json!({"text": id})).await;
            assert_eq!(out.result["is_error"], false, "{era:?}: {}", out.result);
        }
        h.flush().await;
        assert!(
            auth.nonce_demands() >= 3,
            "{era:?}: {}",
            auth.nonce_demands()
        );
        assert_eq!(
            auth.token_requests().len(),
            1,
            "{era:?}: a nonce is not a new token"
        );
        let ran = server
            .stats()
            .with_method("tools/call")
            .filter(|r| r.status == Some(200))
            .count();
        assert_eq!(ran, 3, "{era:?}: each tool ran once");
        if era == Era::Handshake {
            // Each session's DELETE got the nonce asked for too, and ended it.
            let stats = server.stats();
            assert_eq!(
                stats.sessions_deleted.len(),
                stats.sessions_opened.len(),
                "{:?}",
                stats.deletes()
            );
        }
    }
}

#[tokio::test]
async fn a_server_that_never_takes_the_nonce_fails_within_bounds() {
    let (auth, server) = servers(Era::Stateless);
    auth.configure(|c| c.dpop_nonce_every_request = true);
    let guard = auth.dpop_guard();
    // A server that asks for a nonce it never accepts.
    let stubborn = TestServer::start(ServerConfig::new(Era::Stateless).hook(move |seen| {
        if seen.headers.get("dpop").is_some() {
            return Some(
                RawReply::json(401, "{}")
                    .header("www-authenticate", "DPoP error=\"use_dpop_nonce\"")
                    .header("dpop-nonce", "never-good-enough"),
            );
        }
        guard(seen)
    }));
    auth.configure(|c| c.resource = stubborn.url());
    let echo = binding(oauth_spec(&stubborn, &auth.url(), true));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("nonce"), "{message}");
    assert!(
        stubborn.stats().received.len() <= 8,
        "bounded: {}",
        stubborn.stats().received.len()
    );
    let with_proof = stubborn
        .stats()
        .received
        .iter()
        .filter(|r| r.header("dpop").is_some())
        .count();
    assert_eq!(
        with_proof, 3,
        "sent, then twice with a nonce, then given up"
    );
    drop(server);
}

#[tokio::test]
async fn a_dpop_token_the_client_did_not_ask_for_is_refused() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| c.dpop_unasked = true);
    let echo = binding(oauth_spec(&server, &auth.url(), false));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("DPoP-bound token"), "{message}");
    assert!(auth.token_requests()[0].dpop.is_none(), "no proof was sent");
    assert_eq!(server.stats().count("tools/call"), 0);
    let issued = auth.issued();
    for r in &server.stats().received {
        assert!(
            !r.authorization
                .as_deref()
                .is_some_and(|a| issued.iter().any(|t| a.contains(t.as_str()))),
            "the token was never sent"
        );
    }
}

#[tokio::test]
async fn a_proof_a_server_reflects_is_never_shown() {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    auth.configure(|c| c.dpop = true);
    let guard = auth.dpop_guard();
    // Checks the request like any DPoP server, then answers tools/call with an error
    // that quotes the proof it got.
    let server = TestServer::start(ServerConfig::new(Era::Stateless).hook(move |seen| {
        if let Some(refused) = guard(seen) {
            return Some(refused);
        }
        if seen.method() == Some("tools/call") {
            let proof = seen
                .headers
                .get("dpop")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let body = json!({
                "jsonrpc": "2.0",
                "id": seen.body["id"],
                "error": {"code": -32000, "message": format!("bad proof {proof}")},
            });
            return Some(RawReply::json(200, body.to_string()));
        }
        None
    }));
    auth.configure(|c| c.resource = server.url());
    let echo = binding(oauth_spec(&server, &auth.url(), true));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let printed = out.result.to_string();
    let proofs = auth.proofs();
    let reflected = proofs
        .iter()
        .rfind(|p| p.claims["htm"] == "POST")
        .expect("a proof was sent");
    for piece in reflected
        .proof
        .split('.')
        .skip(1)
        .chain([reflected.proof.as_str()])
    {
        assert!(!printed.contains(piece), "the proof leaked: {printed}");
    }
    assert!(printed.contains("bad proof"), "{printed}");
}

#[tokio::test]
async fn a_resumed_stream_gets_a_proof_of_its_own() {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    auth.configure(|c| c.dpop = true);
    let guard = auth.dpop_guard();
    // The call's stream ends after a priming event; the GET that resumes it must pass
    // the DPoP check like any request, then brings the result.
    let call_id = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut config = ServerConfig::new(Era::Handshake).hook(move |seen| {
        if let Some(refused) = guard(seen) {
            return Some(refused);
        }
        let mut id = call_id.lock().expect("the call's id");
        if seen.tool() == Some("echo") {
            *id = seen.id_json();
            let mut reply = RawReply::sse("");
            reply.body = b"id: ev-1\nretry: 10\ndata: \n\n".to_vec();
            return Some(reply);
        }
        (seen.http_method == "GET").then(|| {
            RawReply::sse(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"resumed"}}]}}}}"#
            ))
        })
    });
    config.fault_tools = false;
    let server = TestServer::start(config);
    auth.configure(|c| c.resource = server.url());
    let echo = binding(oauth_spec(&server, &auth.url(), true));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "x"})).await;
    assert_eq!(
        out.result["content"][0]["text"], "resumed",
        "{}",
        out.result
    );
    h.flush().await;
    let get = auth
        .proofs()
        .into_iter()
        .find(|p| p.http_method == "GET")
        .expect("the resuming GET had a proof");
    assert_eq!(get.claims["htm"], "GET");
    assert!(get.dpop_scheme);
}
