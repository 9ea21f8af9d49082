//! A token store shared by processes, when it fails: a save that fails after the
//! authorization server rotated the refresh token, a call cancelled while its save is
//! under way, and a row that vanishes under an authorizer. No refresh token is spent
//! twice (the test server revokes the grant when one is), and the authorizer recovers.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{
    ClientProof, Credential, CredentialSource, Lease, MemoryTokenStore, OAuthClient, Secret,
    StoreError, StoreErrorKind, StoredTokens, TokenKey, TokenStore, Version, Versioned,
};
use brain_tests::auth::TestAuthServer;
use brain_tests::server::{Era, TestServer};
use brain_tools_core::Binding;
use serde_json::json;
use tokio::sync::Notify;

use crate::call_support::{Harness, binding, call, spec};

const CLIENT: &str = "brain-host";
const SECRET: &str = "shared-secret";

/// A [`MemoryTokenStore`] that fails the next saves it is told to, holds saves while
/// told to (saying when one is held), and can lose every row at once.
#[derive(Default)]
struct Faulty {
    inner: Mutex<Arc<MemoryTokenStore>>,
    fail_saves: AtomicU32,
    /// Saves that commit but whose answer is lost (a timeout after the write).
    lose_answers: AtomicU32,
    hold_saves: AtomicBool,
    save_held: Notify,
    go: Notify,
}

impl Faulty {
    fn inner(&self) -> Arc<MemoryTokenStore> {
        self.inner.lock().expect("inner").clone()
    }

    /// Every row gone, as after an operator's `DELETE`.
    fn wipe(&self) {
        *self.inner.lock().expect("inner") = Arc::new(MemoryTokenStore::new());
    }
}

#[async_trait]
impl TokenStore for Faulty {
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError> {
        self.inner().load(key).await
    }
    async fn save(
        &self,
        key: &TokenKey,
        expected: Option<Version>,
        tokens: &StoredTokens,
    ) -> Result<Version, StoreError> {
        if self.hold_saves.swap(false, Ordering::SeqCst) {
            self.save_held.notify_one();
            self.go.notified().await;
        }
        if self
            .fail_saves
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(StoreError::new(
                StoreErrorKind::Timeout,
                "no answer in time",
            ));
        }
        let saved = self.inner().save(key, expected, tokens).await;
        if saved.is_ok()
            && self
                .lose_answers
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Err(StoreError::new(
                StoreErrorKind::Timeout,
                "no answer in time",
            ));
        }
        saved
    }
    async fn lease(
        &self,
        key: &TokenKey,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        self.inner().lease(key, holder, ttl).await
    }
    async fn release(&self, key: &TokenKey, holder: &str) -> Result<(), StoreError> {
        self.inner().release(key, holder).await
    }
}

struct Source(OAuthClient);

#[async_trait]
impl CredentialSource for Source {
    async fn credential(&self, _tenant: &str, _server_url: &str) -> Credential {
        Credential::OAuth(self.0.clone())
    }
}

/// A "process" with machine credentials for `auth`, keeping its tokens in `store`.
fn process(auth: &TestAuthServer, store: &Arc<Faulty>) -> Harness {
    let client = OAuthClient::pinned(auth.url(), CLIENT, ClientProof::Secret(Secret::new(SECRET)))
        .for_principal("p")
        .with_token_store(store.clone());
    let h = Harness::new();
    h.executor.set_credentials(Some(Arc::new(Source(client))));
    h
}

/// An authorization server issuing one-second tokens and rotating refresh tokens.
fn rotating() -> (TestAuthServer, TestServer) {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| {
        c.refresh_tokens = true;
        c.rotate_refresh_tokens = true;
        c.expires_in = Some(1);
    });
    (auth, server)
}

fn grants(auth: &TestAuthServer) -> Vec<String> {
    auth.token_requests()
        .iter()
        .map(|r| r.form("grant_type").unwrap_or_default())
        .collect()
}

/// Process A, whose one call got a token, over a store of [`Faulty`]: where every test
/// here starts.
struct Scene {
    auth: TestAuthServer,
    _server: TestServer,
    store: Arc<Faulty>,
    echo: Arc<Binding>,
    a: Harness,
}

impl Scene {
    async fn start() -> Self {
        let (auth, server) = rotating();
        let store = Arc::new(Faulty::default());
        let echo = binding(spec("echo", &server.url(), "echo"));
        let a = process(&auth, &store);
        let scene = Self {
            auth,
            _server: server,
            store,
            echo,
            a,
        };
        scene.call_ok(&scene.a, "a1").await;
        scene
    }

    /// [`Scene::start`], then A's one-second token expires.
    async fn expired() -> Self {
        let scene = Self::start().await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        scene
    }

    /// `h` calls `echo` and succeeds.
    async fn call_ok(&self, h: &Harness, call_id: &str) {
        let out = call(h, &self.echo, call_id, json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }

    /// Process B calls with what A saved: A's one refresh reached the store, and no
    /// refresh token was used twice.
    async fn b_uses_as_one_refresh(&self) {
        let b = process(&self.auth, &self.store);
        self.call_ok(&b, "b1").await;
        assert_eq!(grants(&self.auth), ["client_credentials", "refresh_token"]);
        assert_eq!(
            self.auth.revocations(),
            0,
            "no refresh token was used twice"
        );
    }
}

/// A renews its expired token with `fault` set on the store; then B calls. A's one
/// refresh must reach the store whatever the fault.
async fn one_renewal_through(fault: impl FnOnce(&Faulty)) {
    let scene = Scene::expired().await;
    fault(&scene.store);
    scene.call_ok(&scene.a, "a2").await;
    scene.b_uses_as_one_refresh().await;
}

#[tokio::test]
async fn a_save_that_fails_after_a_rotation_is_tried_again_before_anyone_refreshes() {
    one_renewal_through(|store| store.fail_saves.store(2, Ordering::SeqCst)).await;
}

#[tokio::test]
async fn a_call_cancelled_during_its_save_still_saves_the_rotated_refresh_token() {
    let scene = Scene::expired().await;
    scene.store.hold_saves.store(true, Ordering::SeqCst);
    tokio::select! {
        out = call(&scene.a, &scene.echo, "a2", json!({"text": "hi"})) => {
            panic!("the call ended while its save was held: {}", out.result)
        }
        () = scene.store.save_held.notified() => {}
    }
    // The call is gone (cancelled); its save goes on once the store answers.
    scene.store.go.notify_one();
    scene.b_uses_as_one_refresh().await;
}

#[tokio::test]
async fn a_call_cancelled_during_its_refresh_still_saves_the_answer() {
    let scene = Scene::expired().await;
    let auth = &scene.auth;
    // The refresh is handled (the old refresh token spent) and answered a second later.
    auth.configure(|c| c.token_delay = Some(Duration::from_secs(1)));
    let refreshed = async {
        while auth.token_requests().len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        out = call(&scene.a, &scene.echo, "a2", json!({"text": "hi"})) => {
            panic!("the call ended before its refresh was answered: {}", out.result)
        }
        () = refreshed => {}
    }
    // The call is gone; the answer is still read and saved, and another process waits
    // for it instead of refreshing with the spent token.
    auth.configure(|c| c.token_delay = None);
    scene.b_uses_as_one_refresh().await;
}

#[tokio::test]
async fn an_authorizer_whose_row_vanished_saves_it_anew() {
    let scene = Scene::start().await;
    scene.store.wipe();
    for i in 2..4 {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        scene.call_ok(&scene.a, &format!("a{i}")).await;
    }
    assert_eq!(
        grants(&scene.auth),
        ["client_credentials", "refresh_token", "refresh_token"]
    );
    assert_eq!(scene.store.inner().len(), 1, "the row was saved again");
}

/// A save that reached the store but whose answer was lost is recognized as this
/// process's own when tried again: the call goes on with its token, and nobody rotates
/// again.
#[tokio::test]
async fn a_save_whose_answer_was_lost_is_known_as_its_own() {
    one_renewal_through(|store| store.lose_answers.store(1, Ordering::SeqCst)).await;
}
