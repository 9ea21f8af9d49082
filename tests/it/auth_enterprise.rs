//! Enterprise-managed authorization (SEP-990) end to end: the host's credential source
//! gives a user's identity assertion and the identity provider's token endpoint; Brain
//! exchanges it for an ID-JAG there, redeems that at the MCP server's (pinned)
//! authorization server, and keeps the token per tenant and server.

use std::sync::Arc;

use brain_mcp_bind::{
    ClientProof, Credential, CredentialSource, IdentityAssertion, OAuthClient, Secret,
};
use brain_tests::auth::{AuthConfig, TestAuthServer, jag_name};
use brain_tests::server::{Era, TestServer};
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};

const CLIENT: &str = "brain-enterprise";
const SECRET: &str = "enterprise-client-secret-7f3a";
/// The user's ID token, as the identity provider issued it.
const ID_TOKEN: &str =
    "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9.aWQtdG9rZW4tc2lnbmF0dXJl";

/// The identity provider, the MCP server's authorization server (which takes the
/// ID-JAGs the provider issues) and the MCP server.
fn servers() -> (TestAuthServer, TestAuthServer, TestServer) {
    let idp = TestAuthServer::start(AuthConfig::new("", "idp-client", "unused"));
    idp.configure(|c| c.identity_assertions = vec![ID_TOKEN.to_owned()]);
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| c.assertions = (1..=4).map(jag_name).collect());
    (idp, auth, server)
}

/// Tenant A's user, as the host knows them.
struct Enterprise {
    issuer: String,
    idp_token_endpoint: String,
}

#[async_trait::async_trait]
impl CredentialSource for Enterprise {
    async fn credential(&self, tenant: &str, _server_url: &str) -> Credential {
        let identity = IdentityAssertion::id_token(&self.idp_token_endpoint, Secret::new(ID_TOKEN))
            .with_idp_client("idp-client", None);
        Credential::OAuth(
            OAuthClient::pinned(
                self.issuer.clone(),
                CLIENT,
                ClientProof::Secret(Secret::new(SECRET)),
            )
            .with_identity_assertion(identity)
            .for_principal(tenant),
        )
    }
}

fn source(issuer: String, idp: &TestAuthServer) -> Arc<Enterprise> {
    Arc::new(Enterprise {
        issuer,
        idp_token_endpoint: format!("{}/token", idp.url()),
    })
}

#[tokio::test]
async fn an_identity_is_exchanged_for_an_id_jag_then_redeemed_and_the_token_kept() {
    let (idp, auth, server) = servers();
    let echo = binding(spec("echo", &server.url(), "echo"));
    let h = Harness::new();
    h.executor.set_credentials(Some(source(auth.url(), &idp)));
    for id in ["c1", "c2"] {
        let out = call(&h, &echo, id, json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    // One exchange at the identity provider: the assertion, for the AS and the server.
    let exchanges = idp.token_requests();
    assert_eq!(exchanges.len(), 1, "kept between calls");
    let exchange = &exchanges[0];
    assert_eq!(exchange.form("subject_token").as_deref(), Some(ID_TOKEN));
    assert_eq!(exchange.form("audience"), Some(auth.url()));
    assert_eq!(exchange.form("resource"), Some(server.url()));
    assert_eq!(exchange.form("client_id").as_deref(), Some("idp-client"));
    assert!(
        !exchange.body.contains(SECRET),
        "the AS's secret stays with the AS"
    );
    // One redemption at the AS: the ID-JAG as a JWT bearer grant, client_secret_basic.
    let redeemed = auth.token_requests();
    assert_eq!(redeemed.len(), 1);
    assert_eq!(
        redeemed[0].form("grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(redeemed[0].form("assertion"), Some(jag_name(1)));
    assert!(
        redeemed[0]
            .authorization
            .as_deref()
            .is_some_and(|a| a.starts_with("Basic "))
    );
    assert!(
        !redeemed[0].body.contains(ID_TOKEN),
        "the assertion went to the IdP only"
    );
    for r in &server.stats().received {
        assert!(!r.raw_body.contains(ID_TOKEN) && !r.raw_body.contains(&jag_name(1)));
    }
    // The token is refused: a new exchange and a new redemption, no user involved.
    auth.revoke_all();
    let out = call(&h, &echo, "c3", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(idp.token_requests().len(), 2);
    assert_eq!(auth.token_requests().len(), 2);
    h.flush().await;
}

#[tokio::test]
async fn a_refused_exchange_fails_the_call_and_never_shows_the_assertion() {
    let (idp, auth, server) = servers();
    // The identity provider refuses, echoing everything it was sent.
    idp.configure(|c| c.refuse_tokens = true);
    let echo = binding(spec("echo", &server.url(), "echo"));
    let h = Harness::new();
    h.executor.set_credentials(Some(source(auth.url(), &idp)));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("token exchange"), "{message}");
    assert!(message.contains("401 (invalid_client)"), "{message}");
    let printed = out.result.to_string();
    for piece in ID_TOKEN.split('.').chain([ID_TOKEN]) {
        assert!(!printed.contains(piece), "leaked {piece}: {printed}");
    }
    assert!(auth.token_requests().is_empty(), "nothing to redeem");
    assert_eq!(server.stats().count("tools/call"), 0);
}

#[tokio::test]
async fn an_id_jag_the_authorization_server_reflects_is_never_shown() {
    let (idp, auth, server) = servers();
    // The authorization server refuses the redemption, echoing the ID-JAG it got.
    auth.configure(|c| c.refuse_tokens = true);
    let echo = binding(spec("echo", &server.url(), "echo"));
    let h = Harness::new();
    h.executor.set_credentials(Some(source(auth.url(), &idp)));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    assert_failure(&out.result, "authorization_failed", false);
    assert_eq!(idp.token_requests().len(), 1);
    let printed = out.result.to_string();
    let jag = jag_name(1);
    for piece in jag.split('.').skip(1).chain([jag.as_str()]) {
        assert!(!printed.contains(piece), "leaked {piece}: {printed}");
    }
}

#[tokio::test]
async fn nothing_is_exchanged_for_an_authorization_server_not_pinned() {
    let (idp, auth, server) = servers();
    let thief = TestAuthServer::start(AuthConfig::new(&server.url(), CLIENT, SECRET));
    auth.configure(|c| c.listed_issuer = Some(thief.url()));
    let echo = binding(spec("echo", &server.url(), "echo"));
    let h = Harness::new();
    h.executor.set_credentials(Some(source(auth.url(), &idp)));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(
        message.contains("does not name the configured issuer"),
        "{message}"
    );
    assert!(idp.seen().is_empty(), "no ID-JAG asked for another server");
    assert!(thief.seen().is_empty());
}
