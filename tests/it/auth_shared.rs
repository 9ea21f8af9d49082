//! A token store shared by several clients (each as a process of its own would be: its
//! own pool and authorizers): a refresh is done once under the store's lease and its
//! rotated refresh token saved before use, machine tokens are shared across principals,
//! and a store that fails fails the call without a token request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{
    ClientProof, Credential, CredentialSource, Lease, MemoryTokenStore, OAuthClient, Secret,
    StoreError, StoreErrorKind, StoredTokens, TokenKey, TokenStore, Version, Versioned,
};
use brain_tests::auth::TestAuthServer;
use brain_tests::server::Era;
use serde_json::json;

use crate::call_support::{Harness, assert_failure, binding, call, spec};

const CLIENT: &str = "brain-host";
const SECRET: &str = "shared-secret";

/// A [`MemoryTokenStore`] that records every save, and fails every operation once told.
#[derive(Default)]
pub(crate) struct Recording {
    inner: MemoryTokenStore,
    saved: Mutex<Vec<(TokenKey, StoredTokens)>>,
    down: Mutex<bool>,
}

impl Recording {
    /// The last tokens saved, and their key.
    pub(crate) fn last_saved(&self) -> Option<(TokenKey, StoredTokens)> {
        self.saved.lock().expect("saved").last().cloned()
    }

    fn saves(&self) -> usize {
        self.saved.lock().expect("saved").len()
    }

    fn check(&self) -> Result<(), StoreError> {
        if *self.down.lock().expect("down") {
            return Err(StoreError::new(
                StoreErrorKind::Unavailable,
                "the store is down",
            ));
        }
        Ok(())
    }
}

#[async_trait]
impl TokenStore for Recording {
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError> {
        self.check()?;
        self.inner.load(key).await
    }
    async fn save(
        &self,
        key: &TokenKey,
        expected: Option<Version>,
        tokens: &StoredTokens,
    ) -> Result<Version, StoreError> {
        self.check()?;
        let version = self.inner.save(key, expected, tokens).await?;
        self.saved
            .lock()
            .expect("saved")
            .push((key.clone(), tokens.clone()));
        Ok(version)
    }
    async fn lease(
        &self,
        key: &TokenKey,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        self.check()?;
        self.inner.lease(key, holder, ttl).await
    }
    async fn release(&self, key: &TokenKey, holder: &str) -> Result<(), StoreError> {
        self.inner.release(key, holder).await
    }
}

struct Source(OAuthClient);

#[async_trait]
impl CredentialSource for Source {
    async fn credential(&self, _tenant: &str, _server_url: &str) -> Credential {
        Credential::OAuth(self.0.clone())
    }
}

/// A "process": its own client, with machine credentials for `auth`, kept in `store`,
/// as `principal`.
fn process(auth: &TestAuthServer, store: &Arc<Recording>, principal: &str) -> Harness {
    let client = OAuthClient::pinned(auth.url(), CLIENT, ClientProof::Secret(Secret::new(SECRET)))
        .for_principal(principal)
        .with_token_store(store.clone());
    let h = Harness::new();
    h.executor.set_credentials(Some(Arc::new(Source(client))));
    h
}

#[tokio::test]
async fn clients_sharing_a_store_refresh_once_and_lose_no_grant() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| {
        c.refresh_tokens = true;
        c.rotate_refresh_tokens = true;
        c.expires_in = Some(1);
    });
    let store = Arc::new(Recording::default());
    let echo = binding(spec("echo", &server.url(), "echo"));
    // The first process gets a token (and a refresh token), and saves them.
    let first = process(&auth, &store, "p0");
    let out = call(&first, &echo, "c0", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(auth.token_requests().len(), 1);
    // Once the token has expired, eight processes call at once: one refreshes under the
    // lease, the others wait for its save and use what it saved.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let processes: Vec<Harness> = (1..=8)
        .map(|i| process(&auth, &store, &format!("p{i}")))
        .collect();
    let ids: Vec<String> = (1..=8).map(|i| format!("c{i}")).collect();
    let calls = processes
        .iter()
        .zip(&ids)
        .map(|(h, id)| call(h, &echo, id, json!({"text": "hi"})));
    for out in futures_util::future::join_all(calls).await {
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    let grants: Vec<_> = auth
        .token_requests()
        .iter()
        .map(|r| r.form("grant_type").unwrap_or_default())
        .collect();
    assert_eq!(
        grants,
        ["client_credentials", "refresh_token"],
        "one refresh for all"
    );
    assert_eq!(auth.revocations(), 0, "no refresh token was used twice");
    // Machine tokens are the client's: saved under no principal, whoever called.
    let (key, saved) = store.last_saved().expect("saved");
    assert_eq!(key.principal, None);
    assert_eq!(saved.issuer, auth.url());
    assert_eq!(store.saves(), 2, "each token saved once");
    first.flush().await;
}

#[tokio::test]
async fn a_store_that_is_down_fails_the_call_without_a_token_request() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let store = Arc::new(Recording::default());
    *store.down.lock().expect("down") = true;
    let echo = binding(spec("echo", &server.url(), "echo"));
    let h = process(&auth, &store, "p");
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("token store (unavailable)"), "{message}");
    assert!(
        auth.token_requests().is_empty(),
        "no token around the store"
    );
    // Back up, the next process gets one token and saves it.
    *store.down.lock().expect("down") = false;
    let h = process(&auth, &store, "p");
    let out = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(auth.token_requests().len(), 1);
    assert_eq!(store.saves(), 1);
}
