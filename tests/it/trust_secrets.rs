//! Trust by construction: a secret is known to the redaction step from the moment it
//! exists, in every form a peer could echo, and every message of a session carries the
//! credential the call holds.
//!
//! The client secret is read from `CARGO_PKG_NAME` (the tests may not set variables).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use brain_tests::auth::TestAuthServer;
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Harness, binding, call, spec};
use crate::hostile_support::printed;

const CLIENT: &str = "brain-host-trust";
/// The value of `CARGO_PKG_NAME` in this test process.
const SECRET: &str = env!("CARGO_PKG_NAME");

/// The `echo` binding (or `tool`) with credentials pinned to `issuer`.
fn oauth_spec(url: &str, issuer: &str, tool: &str) -> Value {
    let mut spec = spec(tool, url, tool);
    spec["oauth"] = json!({
        "issuer": issuer,
        "client_id": CLIENT,
        "client_secret_env": "CARGO_PKG_NAME",
    });
    spec
}

/// Every form of the client secret a server that saw the Basic header could repeat.
fn basic_forms() -> Vec<String> {
    let pair = format!("{CLIENT}:{SECRET}");
    let b64 = STANDARD.encode(&pair);
    vec![SECRET.to_owned(), pair, b64.clone(), format!("Basic {b64}")]
}

fn assert_none_of(forms: &[String], text: &str, what: &str) {
    for form in forms {
        assert!(
            !text.contains(form.as_str()),
            "{what} shows {form:?}: {}",
            &text[..text.len().min(800)]
        );
    }
}

#[tokio::test]
async fn the_client_secret_in_every_basic_form_is_redacted_before_the_first_token() {
    // A server that learned the secret on an earlier run repeats it, its Basic pair and
    // the pair's base64 in `initialize`'s error, before any token was asked for.
    let echoed = basic_forms().join(" | ");
    for era in [Era::Handshake, Era::Stateless] {
        let echoed = echoed.clone();
        let server = TestServer::start(ServerConfig::new(era).hook(move |seen| {
            let method = seen.method()?;
            if method != "initialize" && method != "tools/call" && method != "server/discover" {
                return None;
            }
            let body = json!({
                "jsonrpc": "2.0",
                "id": seen.id_json().parse::<Value>().unwrap_or(Value::Null),
                "error": {"code": -32000, "message": format!("you sent {echoed}")},
            });
            Some(RawReply::json(200, body.to_string()))
        }));
        let echo = binding(oauth_spec(&server.url(), "https://as.example", "echo"));
        let h = Harness::new();
        let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
        let shown = printed(&out);
        assert!(shown.contains("[redacted]"), "{era:?}: {shown}");
        assert_none_of(&basic_forms(), &shown, &format!("{era:?}"));
        h.flush().await;
    }
}

#[tokio::test]
async fn a_token_without_a_usable_lifetime_works_and_every_message_carries_it() {
    // `expires_in: 0` used to make every call fail as handshake_failed: the token was
    // never fresh, so `notifications/initialized` went out without it.
    let (auth, server) = TestAuthServer::guarding(Era::Handshake, CLIENT, SECRET);
    auth.configure(|c| {
        c.expires_in = Some(0);
    });
    let echo = binding(oauth_spec(&server.url(), &auth.url(), "echo"));
    let h = Harness::new();
    for id in ["c1", "c2"] {
        let out = call(&h, &echo, id, json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    h.flush().await;
    assert_eq!(auth.token_requests().len(), 1, "used until refused");
    let bearer = format!("Bearer {}", auth.issued()[0]);
    let stats = server.stats();
    let after_token: Vec<_> = stats
        .received
        .iter()
        .filter(|r| r.authorization.is_some() || r.http_method == "DELETE" || r.method.is_some())
        .skip_while(|r| r.authorization.is_none())
        .collect();
    assert!(after_token.iter().any(|r| r.http_method == "DELETE"));
    for r in after_token {
        assert_eq!(
            r.authorization.as_deref(),
            Some(bearer.as_str()),
            "{} {:?} went without the token",
            r.http_method,
            r.method
        );
    }
}

#[tokio::test]
async fn the_session_delete_inside_the_renewal_margin_carries_the_token() {
    // Four seconds: renewed in its last second. The tool takes 3.2 s, so the session's
    // DELETE goes out inside the margin, where it used to go without a token.
    let (auth, server) = TestAuthServer::guarding(Era::Handshake, CLIENT, SECRET);
    auth.configure(|c| {
        c.expires_in = Some(4);
    });
    let slow = binding(oauth_spec(&server.url(), &auth.url(), "progress"));
    let h = Harness::new();
    let out = call(&h, &slow, "c1", json!({"steps": 2, "delay_ms": 1600})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    h.flush().await;
    let stats = server.stats();
    let deletes: Vec<_> = stats
        .received
        .iter()
        .filter(|r| r.http_method == "DELETE")
        .collect();
    assert_eq!(deletes.len(), 1);
    let tokens = auth.issued();
    assert!(
        deletes[0]
            .authorization
            .as_deref()
            .is_some_and(|a| tokens.iter().any(|t| a == format!("Bearer {t}"))),
        "the DELETE carried a token the server issued"
    );
    assert_eq!(deletes[0].status, Some(200), "and the session was closed");
}

#[tokio::test]
async fn a_token_a_header_cannot_carry_fails_as_authorization_failed_and_is_never_sent() {
    for token in [
        "tok-evil\r\nX-Injected: 1",
        "tok-nul\u{0}x",
        "tok-del\u{7f}x",
        "tok spaced",
    ] {
        let (auth, server) = TestAuthServer::guarding(Era::Handshake, CLIENT, SECRET);
        auth.configure(|c| {
            c.access_token = Some(token.to_owned());
        });
        let echo = binding(oauth_spec(&server.url(), &auth.url(), "echo"));
        let h = Harness::new();
        let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
        let message =
            crate::call_support::assert_failure(&out.result, "authorization_failed", false);
        assert!(
            message.contains("Authorization header"),
            "{token:?}: {message}"
        );
        assert!(
            server
                .stats()
                .received
                .iter()
                .all(|r| r.authorization.is_none()),
            "{token:?}: never sent"
        );
        h.flush().await;
    }
}

#[tokio::test]
async fn a_session_delete_after_the_token_expired_gets_one_renewed_quietly() {
    // Two seconds: the tool takes 2.6 s, so the token has expired when the session's
    // DELETE goes. Cleanup renews it by client credentials (no search, no prompt) and the
    // DELETE carries the new token, where it used to go bare and be refused.
    let (auth, server) = TestAuthServer::guarding(Era::Handshake, CLIENT, SECRET);
    auth.configure(|c| {
        c.expires_in = Some(2);
    });
    let slow = binding(oauth_spec(&server.url(), &auth.url(), "progress"));
    let h = Harness::new();
    let out = call(&h, &slow, "c1", json!({"steps": 2, "delay_ms": 1300})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    h.flush().await;
    let issued = auth.issued();
    assert_eq!(
        issued.len(),
        2,
        "the first token and the one cleanup renewed"
    );
    let stats = server.stats();
    let delete = stats
        .received
        .iter()
        .find(|r| r.http_method == "DELETE")
        .expect("the session's DELETE");
    assert_eq!(
        delete.authorization.as_deref(),
        Some(format!("Bearer {}", issued[1]).as_str()),
        "the DELETE carried the renewed token"
    );
    assert_eq!(delete.status, Some(200), "and the session was closed");
    let grants: Vec<_> = auth
        .token_requests()
        .iter()
        .filter_map(|r| r.form("grant_type"))
        .collect();
    assert_eq!(grants, ["client_credentials", "client_credentials"]);
}
