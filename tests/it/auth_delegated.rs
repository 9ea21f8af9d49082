//! The authorization code grant for an embedder: the host's handler brings the "user" to
//! the authorization URL, the code comes back with its state, PKCE holds, and a refresh
//! token saves the user a second trip.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{
    AuthorizationHandler, AuthorizationPrompt, ClientProof, Credential, CredentialSource,
    OAuthClient, Secret,
};
use brain_mcp_transport::{ClientConfig, FetchRequest, HttpClient};
use brain_tests::auth::{AuthConfig, TestAuthServer};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};

const REDIRECT: &str = "http://localhost:1/callback";

/// A user who approves every prompt (or declines them all), recorded.
struct User {
    http: HttpClient,
    prompts: Mutex<Vec<AuthorizationPrompt>>,
    approve: bool,
}

#[async_trait]
impl AuthorizationHandler for User {
    async fn authorize(
        &self,
        prompt: &AuthorizationPrompt,
    ) -> Result<String, brain_mcp_bind::Declined> {
        self.prompts.lock().expect("prompts").push(prompt.clone());
        if !self.approve {
            return Err("the user declined".into());
        }
        let url = prompt.url.parse().map_err(|_| "not a URL")?;
        let answer = self
            .http
            .fetch(FetchRequest::get(url, Duration::from_secs(5)))
            .await
            .map_err(|e| e.to_string())?;
        answer.location.ok_or_else(|| "no redirect".into())
    }
}

struct ForUser(OAuthClient);

#[async_trait]
impl CredentialSource for ForUser {
    async fn credential(&self, _tenant: &str, _server_url: &str) -> Credential {
        Credential::OAuth(self.0.clone())
    }
}

fn user(approve: bool) -> Arc<User> {
    Arc::new(User {
        http: HttpClient::new(ClientConfig::default()).expect("HTTP client"),
        prompts: Mutex::new(Vec::new()),
        approve,
    })
}

#[tokio::test]
async fn the_user_approves_once_and_a_refresh_token_does_the_rest() {
    let auth = TestAuthServer::start(AuthConfig::new("", "public-client", "unused"));
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(auth.guard()));
    auth.configure(|c| {
        c.resource = server.url();
        c.refresh_tokens = true;
    });
    let alice = user(true);
    let client = OAuthClient::delegated(alice.clone(), REDIRECT)
        .with_client("public-client", None)
        .for_principal("alice");
    let h = Harness::new();
    h.executor.set_credentials(Some(Arc::new(ForUser(client))));
    let echo = binding(spec("echo", &server.url(), "echo"));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    {
        let prompts = alice.prompts.lock().expect("prompts");
        assert_eq!(prompts.len(), 1);
        let url = &prompts[0].url;
        assert!(
            url.starts_with(&format!("{}/authorize?response_type=code", auth.url())),
            "{url}"
        );
        assert!(
            url.contains("code_challenge_method=S256") && url.contains("state="),
            "{url}"
        );
        assert_eq!(prompts[0].principal.as_deref(), Some("alice"));
    }
    let exchange = auth.token_requests().pop().expect("the code exchange");
    assert_eq!(
        exchange.form("grant_type").as_deref(),
        Some("authorization_code")
    );
    assert_eq!(exchange.form("redirect_uri").as_deref(), Some(REDIRECT));
    assert_eq!(exchange.form("resource"), Some(server.url()));
    assert_eq!(exchange.form("client_id").as_deref(), Some("public-client"));
    // The token is refused later: the refresh token gets a new one, with no new prompt.
    auth.revoke_all();
    let out = call(&h, &echo, "c2", json!({"text": "again"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(alice.prompts.lock().expect("prompts").len(), 1);
    let refresh = auth.token_requests().pop().expect("the refresh");
    assert_eq!(refresh.form("grant_type").as_deref(), Some("refresh_token"));
    h.flush().await;
}

#[tokio::test]
async fn a_declined_approval_fails_before_the_tool_is_called() {
    let auth = TestAuthServer::start(AuthConfig::new("", "c", "s3cret-for-bob"));
    let server = TestServer::start(ServerConfig::new(Era::Stateless).hook(auth.guard()));
    auth.configure(|c| c.resource = server.url());
    let bob = user(false);
    let secret = || Some(ClientProof::Secret(Secret::new("s3cret-for-bob")));
    let echo = binding(spec("echo", &server.url(), "echo"));
    // A client with a secret and no pinned issuer is refused before the user is asked.
    let unpinned = OAuthClient::delegated(bob.clone(), REDIRECT).with_client("c", secret());
    let h = Harness::new();
    h.executor
        .set_credentials(Some(Arc::new(ForUser(unpinned))));
    let out = call(&h, &echo, "c0", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("pin it"), "{message}");
    assert!(bob.prompts.lock().expect("prompts").is_empty());
    // Pinned, the user is asked, and declines.
    let client = OAuthClient::delegated(bob.clone(), REDIRECT)
        .with_client("c", secret())
        .pinned_to(auth.url());
    let h = Harness::new();
    h.executor.set_credentials(Some(Arc::new(ForUser(client))));
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("the user declined"), "{message}");
    // Asked again at once, the user is not prompted again: the refusal holds a while.
    let out = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    assert_failure(&out.result, "authorization_failed", false);
    assert_eq!(bob.prompts.lock().expect("prompts").len(), 1);
    assert!(auth.token_requests().is_empty());
    assert_eq!(server.stats().count("tools/call"), 0);
}

#[tokio::test]
async fn a_token_store_carries_a_delegation_across_restarts() {
    let auth = TestAuthServer::start(AuthConfig::new("", "public-client", "unused"));
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(auth.guard()));
    auth.configure(|c| {
        c.resource = server.url();
        c.refresh_tokens = true;
    });
    let store = Arc::new(crate::auth_shared::Recording::default());
    let carol = user(true);
    let client = || {
        OAuthClient::delegated(carol.clone(), REDIRECT)
            .with_client("public-client", None)
            .for_principal("carol")
            .with_token_store(store.clone())
    };
    let echo = binding(spec("echo", &server.url(), "echo"));
    let run = |call_id: &'static str| {
        let h = Harness::new();
        h.executor
            .set_credentials(Some(Arc::new(ForUser(client()))));
        let echo = echo.clone();
        async move {
            let out = call(&h, &echo, call_id, json!({"text": "hi"})).await;
            h.flush().await;
            out
        }
    };
    // The first run: the user approves; the tokens are saved.
    let out = run("c1").await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(carol.prompts.lock().expect("prompts").len(), 1);
    let (key, saved) = store.last_saved().expect("saved tokens");
    assert_eq!(
        key.principal.as_deref(),
        Some("carol"),
        "a user's tokens are hers"
    );
    assert_eq!(saved.issuer, auth.url());
    assert!(saved.refresh_token.is_some() && saved.access_token.is_some());
    assert!(
        !format!("{saved:?}").contains("refresh-"),
        "Debug shows no token"
    );
    // A restart (a new client): the saved access token is sent at once.
    let challenges = auth.challenges().len();
    let out = run("c2").await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(auth.challenges().len(), challenges, "no 401 first");
    assert_eq!(auth.token_requests().len(), 1);
    // Another restart after the token was revoked: the saved refresh token gets a new
    // one, without the user.
    auth.revoke_all();
    let out = run("c3").await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(carol.prompts.lock().expect("prompts").len(), 1);
    let last = auth.token_requests().pop().expect("a token request");
    assert_eq!(last.form("grant_type").as_deref(), Some("refresh_token"));
}
