//! OAuth client credentials end to end: a binding's `oauth` block (the secret in the
//! environment), tokens shared and renewed, refusals, and an authorization server or MCP
//! server that tries to get the secret sent elsewhere.
//!
//! The secret is read from `CARGO_PKG_NAME`, which cargo sets for every test process
//! (the tests may not set variables: `set_var` is unsafe and the workspace forbids it).

use std::sync::Arc;

use brain_mcp_bind::{ClientProof, Credential, CredentialSource, OAuthClient, Secret};
use brain_tests::auth::{AuthConfig, TestAuthServer};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, assert_failure, binding, call, call_with, spec};
use crate::hostile_support::token_forms;

const CLIENT: &str = "brain-host";
/// The value of `CARGO_PKG_NAME` in this test process.
const SECRET: &str = env!("CARGO_PKG_NAME");

/// An authorization server and an MCP server it guards.
fn servers(era: Era) -> (TestAuthServer, TestServer) {
    TestAuthServer::guarding(era, CLIENT, SECRET)
}

/// The `echo` binding with credentials pinned to `issuer`.
fn oauth_spec(server: &TestServer, issuer: &str) -> Value {
    let mut spec = spec("echo", &server.url(), "echo");
    spec["oauth"] = json!({
        "issuer": issuer,
        "client_id": CLIENT,
        "client_secret_env": "CARGO_PKG_NAME",
    });
    spec
}

fn text(out: &crate::call_support::Outcome) -> String {
    out.result.to_string()
}

#[tokio::test]
async fn a_binding_with_oauth_gets_one_token_shared_by_calls_arriving_together() {
    for era in [Era::Handshake, Era::Stateless] {
        let (auth, server) = servers(era);
        let echo = binding(oauth_spec(&server, &auth.url()));
        let h = Harness::new();
        let ids: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
        let calls = ids
            .iter()
            .map(|id| call(&h, &echo, id, json!({"text": "hi"})));
        for out in futures_util::future::join_all(calls).await {
            assert_eq!(out.result["is_error"], false, "{era:?}: {}", text(&out));
        }
        let tokens = auth.token_requests();
        assert_eq!(
            tokens.len(),
            1,
            "{era:?}: one token for calls arriving together"
        );
        let request = &tokens[0];
        assert_eq!(
            request.form("grant_type").as_deref(),
            Some("client_credentials")
        );
        assert_eq!(request.form("resource"), Some(server.url()));
        // client_secret_basic, the default the metadata allows; never in the body.
        assert!(
            request
                .authorization
                .as_deref()
                .is_some_and(|a| a.starts_with("Basic "))
        );
        assert!(!request.body.contains(SECRET));
        // Every MCP request with a token carried the one issued; none carried the secret.
        let stats = server.stats();
        for r in &stats.received {
            assert!(!r.raw_body.contains(SECRET));
            if let Some(a) = &r.authorization {
                assert_eq!(a, &format!("Bearer {}", auth.issued()[0]), "{era:?}");
            }
        }
        // Later calls use the token held: no new 401, no new token.
        let challenges = auth.challenges().len();
        let out = call(&h, &echo, "later", json!({"text": "again"})).await;
        assert_eq!(out.result["is_error"], false, "{}", text(&out));
        assert_eq!(auth.challenges().len(), challenges);
        assert_eq!(auth.token_requests().len(), 1);
        h.flush().await;
    }
}

#[tokio::test]
async fn the_secret_never_goes_to_an_issuer_the_binding_does_not_name() {
    // The server's metadata names another authorization server (which would collect
    // whatever it is sent).
    let (auth, server) = servers(Era::Handshake);
    let thief = TestAuthServer::start(AuthConfig::new(&server.url(), CLIENT, SECRET));
    auth.configure(|c| c.listed_issuer = Some(thief.url()));
    let echo = binding(oauth_spec(&server, &auth.url()));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(
        message.contains("does not name the configured issuer"),
        "{message}"
    );
    assert!(
        thief.seen().is_empty(),
        "nothing at all went to the other server"
    );
    assert!(auth.token_requests().is_empty());
    // The authorization server's own metadata names another issuer.
    auth.configure(|c| {
        c.listed_issuer = None;
        c.metadata_issuer = Some("https://evil.example".into());
    });
    let h = Harness::new();
    let out = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("names issuer"), "{message}");
    assert!(
        auth.token_requests().is_empty(),
        "no token request after an issuer mismatch"
    );
    assert_eq!(server.stats().count("tools/call"), 0);
}

#[tokio::test]
async fn a_refused_token_gets_one_fresh_token_and_the_tool_runs_once() {
    let (auth, server) = servers(Era::Handshake);
    let echo = binding(oauth_spec(&server, &auth.url()));
    let h = Harness::new();
    let first = call(&h, &echo, "c1", json!({"text": "one"})).await;
    assert_eq!(first.result["is_error"], false, "{}", text(&first));
    // The server forgets every token: the next call's token is refused once.
    auth.revoke_all();
    let second = call(&h, &echo, "c2", json!({"text": "two"})).await;
    assert_eq!(second.result["is_error"], false, "{}", text(&second));
    assert_eq!(auth.token_requests().len(), 2);
    let stats = server.stats();
    let ran: Vec<_> = stats
        .with_method("tools/call")
        .filter(|r| r.status == Some(200))
        .collect();
    assert_eq!(ran.len(), 2, "each tool ran once");
    h.flush().await;
}

#[tokio::test]
async fn a_server_that_refuses_every_token_fails_after_one_fresh_one() {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    let guard = auth.guard();
    // Lets the session open, then refuses every tools/call, whatever its token.
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(move |seen| {
        if seen.method() == Some("tools/call") {
            let challenge = "Bearer error=\"invalid_token\"";
            return Some(
                brain_tests::server::RawReply::json(401, "{}")
                    .header("www-authenticate", challenge),
            );
        }
        guard(seen)
    }));
    auth.configure(|c| c.resource = server.url());
    let echo = binding(oauth_spec(&server, &auth.url()));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("refused a fresh token"), "{message}");
    assert_eq!(
        auth.token_requests().len(),
        2,
        "the first token and one fresh one"
    );
    assert_eq!(
        server.stats().count("tools/call"),
        2,
        "sent with each token, refused each time"
    );
    h.flush().await;
}

#[tokio::test]
async fn a_token_about_to_expire_is_renewed_before_it_is_sent() {
    let (auth, server) = servers(Era::Stateless);
    // Two seconds: renewed in its last half second.
    auth.configure(|c| c.expires_in = Some(2));
    let echo = binding(oauth_spec(&server, &auth.url()));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", text(&out));
    let out = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", text(&out));
    assert_eq!(auth.token_requests().len(), 1, "still fresh");
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    let out = call(&h, &echo, "c3", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", text(&out));
    // One 401 taught the client where tokens come from; the renewal needed none.
    assert_eq!(auth.challenges().len(), 1);
    assert_eq!(auth.token_requests().len(), 2);
}

#[tokio::test]
async fn token_endpoint_refusals_are_typed_and_never_echo_the_secret() {
    let (auth, server) = servers(Era::Handshake);
    auth.configure(|c| c.refuse_tokens = true);
    let echo = binding(oauth_spec(&server, &auth.url()));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("401 (invalid_client)"), "{message}");
    let printed = out.result.to_string();
    for form in token_forms(SECRET) {
        assert!(
            !printed.contains(&form),
            "the secret leaked as {form:?}: {printed}"
        );
    }
    // Basic's base64 of id:secret.
    let basic = auth.token_requests()[0]
        .authorization
        .clone()
        .unwrap_or_default();
    assert!(!printed.contains(basic.trim_start_matches("Basic ")));
    assert_eq!(server.stats().count("tools/call"), 0);
    // A second call soon after gets the same failure without asking again.
    let again = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    assert_failure(&again.result, "authorization_failed", false);
    assert_eq!(auth.token_requests().len(), 1);
}

/// Tenant A's credentials come from the host; tenant B has none.
struct PerTenant(std::sync::Mutex<String>, String);

#[async_trait::async_trait]
impl CredentialSource for PerTenant {
    async fn credential(&self, tenant: &str, _server_url: &str) -> Credential {
        if tenant != crate::call_support::TENANT {
            return Credential::NotAuthorized;
        }
        let secret = self.0.lock().expect("secret").clone();
        Credential::OAuth(OAuthClient::pinned(
            self.1.clone(),
            CLIENT,
            ClientProof::Secret(Secret::new(secret)),
        ))
    }
}

#[tokio::test]
async fn each_tenant_gets_its_own_credentials_and_rotation_needs_no_restart() {
    let (auth, server) = servers(Era::Handshake);
    let mut no_oauth = spec("echo", &server.url(), "echo");
    no_oauth["tenants"] = json!([crate::call_support::TENANT, "tenant-b"]);
    let echo = binding(no_oauth);
    let h = Harness::new();
    let source = Arc::new(PerTenant(
        std::sync::Mutex::new(SECRET.to_owned()),
        auth.url(),
    ));
    h.executor.set_credentials(Some(source.clone()));
    let out = call(&h, &echo, "a1", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", text(&out));
    // Tenant B: refused before anything is sent.
    let before = server.stats().received.len();
    let mut b = Call::new("b1", json!({"text": "hi"}));
    b.tenant = "tenant-b".into();
    let out = call_with(&h, &echo, b).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("tenant-b"), "{message}");
    assert_eq!(server.stats().received.len(), before);
    // The secret rotates at the authorization server and in the host's store.
    auth.configure(|c| c.client_secret = "rotated-secret-9f2".into());
    auth.revoke_all();
    *source.0.lock().expect("secret") = "rotated-secret-9f2".into();
    let out = call(&h, &echo, "a2", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", text(&out));
    let last = auth.token_requests().pop().expect("a token request");
    let expected = base64_basic(CLIENT, "rotated-secret-9f2");
    assert_eq!(last.authorization.as_deref(), Some(expected.as_str()));
    h.flush().await;
}

fn base64_basic(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

#[tokio::test]
async fn a_tool_host_asks_its_credential_source_per_tenant() {
    let (auth, server) = servers(Era::Stateless);
    let mut open = spec("echo", &server.url(), "echo");
    open["tenants"] = json!([crate::call_support::TENANT, "tenant-b"]);
    let config =
        brain_mcp_bind::HostConfig::from_value(&json!({ "tools": [open] })).expect("config");
    let host = brain_mcp_bind::ToolHost::new(config, brain_mcp_bind::ClientConfig::default())
        .expect("a host");
    let source = PerTenant(std::sync::Mutex::new(SECRET.to_owned()), auth.url());
    host.set_credentials(Some(Arc::new(source)));
    let call =
        |tenant: &str| brain_mcp_bind::ToolCall::new(tenant, "s", "h1", json!({"text": "hi"}));
    let out = crate::stdio_support::call_as(&host, "echo", call(crate::call_support::TENANT)).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(auth.token_requests().len(), 1);
    let out = crate::stdio_support::call_as(&host, "echo", call("tenant-b")).await;
    assert_failure(&out.result, "authorization_failed", false);
    assert!(host.shutdown(std::time::Duration::from_secs(5)).await);
}

#[tokio::test]
async fn a_step_up_beyond_the_configured_scopes_is_refused() {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    let guard = auth.guard();
    // Any token is short of scope for tools/call, which asks for admin rights.
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(move |seen| {
        if let Some(refused) = guard(seen) {
            return Some(refused);
        }
        (seen.method() == Some("tools/call")).then(|| {
            let challenge = "Bearer error=\"insufficient_scope\", scope=\"tools.read admin\"";
            brain_tests::server::RawReply::json(403, "{}").header("www-authenticate", challenge)
        })
    }));
    auth.configure(|c| c.resource = server.url());
    let mut spec = oauth_spec(&server, &auth.url());
    spec["oauth"]["scopes"] = json!(["tools.read"]);
    let echo = binding(spec);
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("\"admin\""), "{message}");
    let asked: Vec<_> = auth
        .token_requests()
        .iter()
        .map(|r| r.form("scope"))
        .collect();
    assert_eq!(
        asked,
        [Some("tools.read".to_owned())],
        "never asked for more"
    );
    h.flush().await;
}
