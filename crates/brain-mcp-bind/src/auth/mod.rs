//! OAuth for HTTP servers: the tokens of one client for one server, got when the server
//! asks for one, shared by every call, and renewed before they expire.
//!
//! The core decides the protocol (`brain_mcp_proto::auth`: where metadata is, whether it
//! is believed, the forms, what a refusal means); this module runs the exchanges and
//! holds the tokens. A client with a secret is pinned to its configured issuer: a
//! server's metadata that names another authorization server ends the search before
//! any secret is sent.

mod authorizers;
#[cfg(feature = "bench")]
mod bench;
mod code;
mod configured;
pub(crate) mod credentials;
mod dpop;
mod failure;
mod flow;
mod footprint;
mod given;
mod held;
mod memory;
mod net;
#[cfg(feature = "postgres")]
mod postgres;
mod saving;
mod seen;
mod shared;
mod store;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use brain_mcp_proto::auth::code::with_offline_access;
use brain_mcp_proto::auth::lifetime::{self, FailureHold};
use brain_mcp_proto::auth::token::Grant;
use brain_mcp_proto::auth::{Authority, BearerChallenge, HttpUrl, Token, scope};
use brain_mcp_proto::client::Header;
use brain_mcp_proto::text::{Secret, Secrets};
use brain_mcp_transport::BearerToken;

pub(crate) use authorizers::Authorizers;
pub use authorizers::{DEFAULT_MAX_AUTHORIZER_BYTES, DEFAULT_MAX_AUTHORIZERS};
pub use configured::token_store_from_config;
pub(crate) use credentials::Credentials;
use dpop::DpopKey;
pub(crate) use failure::AuthFailure;
use footprint::Footprint;
pub(crate) use given::Store;
pub use given::{
    AuthorizationHandler, AuthorizationPrompt, ClientProof, Credential, CredentialSource, Declined,
    IdentityAssertion, OAuthClient,
};
use held::{Held, Remembered};
pub use memory::MemoryTokenStore;
pub(crate) use net::{Net, Reach};
#[cfg(feature = "postgres")]
pub use postgres::{DEFAULT_DB_TIMEOUT, PostgresTokenStore};
pub(crate) use seen::no_token;
pub use seen::{AUTH_TARGET, TOKEN_REQUESTS};
pub use store::{
    DEFAULT_LEASE_TTL, Lease, StoreError, StoreErrorKind, StoredTokens, TokenKey, TokenStore,
    Version, Versioned,
};

/// The tokens of one client (credentials, issuer, scopes, principal) for one server.
/// Its `Debug` names the issuer and scopes only: it holds tokens and client secrets.
pub(crate) struct Authorizer {
    client: OAuthClient,
    scopes: Option<String>,
    held: Mutex<Option<Held>>,
    /// Secrets handled but not held: tokens replaced, client secrets used.
    remembered: Mutex<Remembered>,
    /// One token request at a time; holds what the requests learned.
    flight: tokio::sync::Mutex<Flight>,
    /// Whether tokens are asked for DPoP-bound: configured, or a server asked.
    dpop_wanted: AtomicBool,
    /// The DPoP key, once made (one per authorizer, in memory only).
    dpop_key: Mutex<Option<Arc<DpopKey>>>,
    /// The version of the row held, and the names used in the shared store.
    shared: shared::Shared,
    /// What the tokens held and secrets remembered weigh, in the pool's total.
    footprint: Footprint,
}

/// What token requests learn and reuse: the server's authority, and who this client
/// is at each authorization server (never reused at another). No `Debug`: it holds
/// registered clients' secrets.
#[derive(Default)]
struct Flight {
    authority: Option<Authority>,
    registered: HashMap<String, Credentials>,
    /// The last failure, held for the core's `FAILURE_HOLD`.
    failed: FailureHold<AuthFailure>,
    /// Whether the host's store was asked.
    loaded: bool,
}

impl Flight {
    /// The last failure, while it is held.
    fn held_failure(&self) -> Option<AuthFailure> {
        self.failed.held(Instant::now()).cloned()
    }

    /// Notes how a token request ended.
    fn note<T>(&mut self, result: &Result<T, AuthFailure>) {
        let failure = result.as_ref().err().cloned();
        self.failed.note(Instant::now(), failure);
    }
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("issuer", &self.client.issuer)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Authorizer {
    fn new(client: &OAuthClient, footprint: Footprint) -> Self {
        let scopes = client.scopes.join(" ");
        Self {
            client: client.clone(),
            scopes: (!scopes.is_empty()).then_some(scopes),
            held: Mutex::new(None),
            remembered: Mutex::new(Remembered::default()),
            flight: tokio::sync::Mutex::new(Flight::default()),
            dpop_wanted: AtomicBool::new(client.dpop),
            dpop_key: Mutex::new(None),
            shared: shared::Shared::new(client),
            footprint,
        }
    }

    /// The DPoP key, made now if tokens are to be DPoP-bound and none exists yet.
    fn dpop_key(&self) -> Result<Option<Arc<DpopKey>>, AuthFailure> {
        if !self.dpop_wanted.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut key = lock(&self.dpop_key);
        if key.is_none() {
            *key = Some(Arc::new(DpopKey::generate()?));
        }
        Ok(key.clone())
    }

    /// From now on, tokens are asked for DPoP-bound: the server challenged with `DPoP`
    /// alone.
    pub(crate) fn require_dpop(&self) {
        self.dpop_wanted.store(true, Ordering::Relaxed);
    }

    /// Keeps the nonce the MCP server asked for, for the next proofs.
    pub(crate) fn resource_nonce(&self, nonce: &str) {
        if let Some(key) = lock(&self.dpop_key).as_ref() {
            key.resource_nonce(nonce);
        }
    }

    /// The `DPoP` header of a `htm` request to the MCP server at `url` carrying the
    /// DPoP-bound `token`, and the proof (a secret of that request); `None` for a bearer
    /// token, or when no proof can be made (the server then refuses the request).
    pub(crate) fn resource_proof(
        &self,
        htm: &str,
        url: &str,
        token: &BearerToken,
    ) -> Option<(Header, String)> {
        if !token.is_dpop() {
            return None;
        }
        let key = lock(&self.dpop_key).clone()?;
        key.resource_header(htm, url, token.expose()).ok()
    }

    fn held(&self) -> Option<Held> {
        lock(&self.held).clone()
    }

    /// A token for a message that closes or follows up work, renewed if the one held has
    /// expired, without anything interactive or new: only at the authority already
    /// known, with the client's given or registered identity, by refresh token or by
    /// client credentials; never a search, a registration or a user's approval (a
    /// cleanup step is no time to prompt anyone). `None` when none can be had that way.
    pub(crate) async fn renew_quietly(
        &self,
        reach: &Reach<'_>,
        server: &HttpUrl,
    ) -> Option<BearerToken> {
        if let Some(token) = self.bearer_for_cleanup() {
            return Some(token);
        }
        let mut flight = self.flight.lock().await;
        if let Some(token) = self.bearer_for_cleanup() {
            return Some(token);
        }
        if let Some(store) = self.store() {
            // Renewing rotates the grant, which happens under the lease only: a cleanup
            // step takes what another call or process saved.
            let key = self.store_key(server);
            self.reload(store.0.as_ref(), &key).await.ok()?;
            return self.bearer_for_cleanup();
        }
        if flight.held_failure().is_some() {
            return None;
        }
        let authority = flight.authority.clone()?;
        let who = Credentials::of(&self.client)
            .or_else(|| flight.registered.get(&authority.issuer).cloned())?;
        let scope = self.scope();
        let refresh = self.refresh_for(&authority.issuer);
        let grant = match (&refresh, &self.client.delegated) {
            (Some(refresh), _) => Grant::Refresh(refresh.expose()),
            (None, None) => Grant::ClientCredentials,
            (None, Some(_)) => return None,
        };
        let net = reach.net().await;
        let dpop = self.dpop_key().ok()?;
        let got = flow::token(
            &net,
            &authority,
            &who,
            grant,
            scope.as_deref(),
            dpop.as_deref(),
        )
        .await;
        let kept = got.and_then(|token| self.keep(token, scope, &authority.issuer, &who));
        flight.note(&kept);
        kept.ok()
    }

    /// The refresh token held, if the authorization server `issuer` granted it (the only
    /// one it may go to).
    fn refresh_for(&self, issuer: &str) -> Option<Secret> {
        self.held()
            .filter(|h| lifetime::refresh_goes_to(&h.issuer, issuer))
            .and_then(|h| h.refresh)
    }

    /// The tokens held and every secret handled, to remove from everything a server says.
    pub(crate) fn secrets(&self) -> Secrets {
        let held = self.held();
        let secrets = lock(&self.remembered).secrets(held.as_ref());
        match lock(&self.dpop_key).as_ref() {
            Some(key) => secrets.with(key.recent()),
            None => secrets,
        }
    }

    /// The issuer of the token held, if any.
    pub(crate) fn issuer(&self) -> Option<String> {
        self.held().map(|h| h.issuer)
    }

    /// The scope of the token held, or the configured one.
    pub(crate) fn scope(&self) -> Option<String> {
        self.held()
            .and_then(|h| h.scope)
            .or_else(|| self.scopes.clone())
    }

    /// The token for a request about to go: the one held; else, once the server's
    /// authority is known, a new one; else none (the server's 401 will say where to go).
    pub(crate) async fn prepare(
        &self,
        reach: &Reach<'_>,
        server: &HttpUrl,
    ) -> Result<Option<BearerToken>, AuthFailure> {
        if let Some(token) = self.bearer() {
            return Ok(Some(token));
        }
        let mut flight = self.flight.lock().await;
        self.load(&mut flight, server).await?;
        if let Some(token) = self.bearer() {
            return Ok(Some(token));
        }
        if flight.authority.is_none() {
            return Ok(None);
        }
        if let Some(why) = flight.held_failure() {
            return Err(why);
        }
        let net = reach.net().await;
        let result = self.get(&net, &mut flight, server, self.scope()).await;
        flight.note(&result);
        result.map(Some)
    }

    /// A token after the server refused `refused` (or a request without one) with
    /// `challenge`; `step_up` is the wider scope to ask for after `insufficient_scope`.
    /// Calls refused together share one token request.
    pub(crate) async fn authorize(
        &self,
        reach: &Reach<'_>,
        server: &HttpUrl,
        challenge: Option<&BearerChallenge>,
        refused: Option<&BearerToken>,
        step_up: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        let mut flight = self.flight.lock().await;
        self.load(&mut flight, server).await?;
        if step_up.is_none()
            && let Some(token) = self.bearer()
            && Some(&token) != refused
        {
            // Another call got a new token while this one waited.
            return Ok(token);
        }
        if let Some(why) = flight.held_failure() {
            return Err(why);
        }
        if let (Some(wanted), Some(configured)) = (&step_up, &self.scopes)
            && let Some(extra) = wanted
                .split(' ')
                .find(|s| !configured.split(' ').any(|c| c == *s))
        {
            return Err(AuthFailure::config(format!(
                "authorization: the server asks for scope {extra:?}, which the credentials do \
                 not configure"
            )));
        }
        if refused.is_some() && step_up.is_none() {
            // The server refused it: never send it again (a refresh token, if any, may
            // still get a new one), and ask afresh who grants tokens for it: its
            // authorization server may have changed.
            if let Some(held) = lock(&self.held).as_mut() {
                held.refuse();
            }
            flight.authority = None;
            self.footprint.set_authority(0);
        }
        let net = reach.net().await;
        let result = self
            .authorize_in(&net, &mut flight, server, challenge, step_up)
            .await
            .and_then(|token| {
                if lifetime::usable_after_refusal(refused.map(BearerToken::expose), token.expose())
                {
                    Ok(token)
                } else {
                    Err(AuthFailure::server(
                        "authorization: the authorization server gave back the refused token",
                    ))
                }
            });
        flight.note(&result);
        result
    }

    async fn authorize_in(
        &self,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        challenge: Option<&BearerChallenge>,
        step_up: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        if flight.authority.is_none() {
            let pinned = self.client.issuer.as_deref();
            let found = flow::find(net, server, challenge, pinned).await?;
            if !self.client.may_send_to(&found.issuer) {
                return Err(AuthFailure::config(format!(
                    "authorization: the server names the authorization server {:?}; the client \
                     credentials were not sent there: review it and pin it (oauth.issuer, \
                     -oauth-issuer)",
                    found.issuer
                )));
            }
            self.footprint
                .set_authority(footprint::weigh_authority(&found));
            flight.authority = Some(found);
        }
        let authority = flight
            .authority
            .as_ref()
            .ok_or_else(|| AuthFailure::host("authorization: no authority"))?;
        let wanted = step_up.or_else(|| {
            self.scopes.clone().or_else(|| {
                scope::first_scope(
                    challenge.and_then(|c| c.scope.as_deref()),
                    authority.scopes_supported.as_deref(),
                )
            })
        });
        self.get(net, flight, server, wanted).await
    }

    /// The host's store, when it may keep these tokens: not one user's tokens under
    /// enterprise-managed authorization without a principal to keep them apart by (the
    /// store is keyed by principal and server only, so another user would load them),
    /// and not for a client set to DPoP or challenged for it (its tokens are bound to a
    /// key this process alone holds, and a stored Bearer token would bypass the binding),
    /// and not for a client that registers itself (no `client_id` given): each process
    /// registers a client of its own, whose tokens and refresh tokens the others' client
    /// could not use.
    fn store(&self) -> Option<&Store> {
        let client = &self.client;
        let unkeyed = client.enterprise.is_some() && client.principal.is_none();
        let dpop = client.dpop || self.dpop_wanted.load(Ordering::Relaxed);
        let registers = client.client_id.is_none();
        (!unkeyed && !dpop && !registers)
            .then_some(client.store.as_ref())
            .flatten()
    }

    /// Once, the tokens the host's store kept for this server (when nothing is held). A
    /// store that fails fails the call at once, the failure held like any other (a
    /// store that is down is not asked again by every call).
    async fn load(&self, flight: &mut Flight, server: &HttpUrl) -> Result<(), AuthFailure> {
        if std::mem::replace(&mut flight.loaded, true) || self.held().is_some() {
            return Ok(());
        }
        let Some(store) = self.store() else {
            return Ok(());
        };
        let key = self.store_key(server);
        let loaded = self.reload(store.0.as_ref(), &key).await.map(|_| ());
        flight.note(&loaded);
        loaded
    }

    /// A new token: by refresh token when one is held and works, else by the client's
    /// grant (client credentials, or the user's approval); with a host's store, one
    /// another process saved, else one renewed under the store's lease and saved before
    /// it is used.
    async fn get(
        &self,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        scope: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        match self.store() {
            Some(store) => {
                let store = store.0.clone();
                self.get_shared(store, net, flight, server, scope).await
            }
            None => self.fetch(net, flight, server, scope).await,
        }
    }

    /// A new token: by refresh token when one is held and works, else by the client's
    /// grant.
    async fn fetch(
        &self,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        scope: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        let who = self.identity(net, flight).await?;
        let authority = flight
            .authority
            .as_ref()
            .ok_or_else(|| AuthFailure::host("authorization: no authority"))?;
        let dpop = self.dpop_key()?;
        let dpop = dpop.as_deref();
        if let Some(refresh) = self.refresh_for(&authority.issuer) {
            let grant = Grant::Refresh(refresh.expose());
            if let Ok(token) =
                flow::token(net, authority, &who, grant, scope.as_deref(), dpop).await
            {
                return self.keep(token, scope, &authority.issuer, &who);
            }
        }
        let token = match &self.client.delegated {
            None => {
                flow::token(
                    net,
                    authority,
                    &who,
                    Grant::ClientCredentials,
                    scope.as_deref(),
                    dpop,
                )
                .await?
            }
            Some(delegated) => {
                let scope = with_offline_access(scope.clone(), &authority.server);
                let (code, verifier) = code::approve(
                    authority,
                    delegated,
                    &who,
                    scope.as_deref(),
                    &server.canonical(),
                    self.client.principal.as_deref(),
                )
                .await?;
                let grant = Grant::Code {
                    code: &code,
                    verifier: &verifier,
                    redirect_uri: &delegated.redirect_uri,
                };
                flow::token(net, authority, &who, grant, None, dpop).await?
            }
        };
        self.keep(token, scope, &authority.issuer, &who)
    }

    /// Who the client is at the current authorization server: as given, else as
    /// registered there (once per issuer).
    async fn identity(
        &self,
        net: &Net<'_>,
        flight: &mut Flight,
    ) -> Result<Credentials, AuthFailure> {
        if let Some(given) = Credentials::of(&self.client) {
            return Ok(given);
        }
        let authority = flight
            .authority
            .as_ref()
            .ok_or_else(|| AuthFailure::host("authorization: no authority"))?;
        if let Some(known) = flight.registered.get(&authority.issuer) {
            return Ok(known.clone());
        }
        let delegated = self
            .client
            .delegated
            .as_ref()
            .ok_or_else(|| AuthFailure::config("authorization: the client has no client_id"))?;
        let got = code::register(net, authority, delegated).await?;
        if let Some(ClientProof::Secret(secret)) = &got.proof {
            lock(&self.remembered).add(&Secret::issued(secret.expose()));
        }
        self.reweigh();
        flight
            .registered
            .insert(authority.issuer.clone(), got.clone());
        Ok(got)
    }

    /// Holds `token`, remembering the one it replaces and the client secret `who` used
    /// (read from the environment, it was no secret of the call before).
    fn keep(
        &self,
        token: Token,
        asked: Option<String>,
        issuer: &str,
        who: &Credentials,
    ) -> Result<BearerToken, AuthFailure> {
        let mut held = lock(&self.held);
        let refused = held
            .as_ref()
            .filter(|h| h.life.is_refused())
            .map(|h| h.token.expose());
        if !lifetime::usable_after_refusal(refused, token.access_token.expose()) {
            return Err(AuthFailure::server(
                "authorization: the authorization server gave back the refused token",
            ));
        }
        let new = Held::new(token, asked, issuer, held.as_ref());
        let bearer = new.token.clone();
        let mut remembered = lock(&self.remembered);
        if let Some(old) = held.replace(new) {
            remembered.retire(&old);
        }
        if let Some(secret) = who.secret_value() {
            // A registered client's secret is the authorization server's choice.
            let secret = if who.issued {
                Secret::issued(secret)
            } else {
                Secret::new(secret)
            };
            remembered.add(&secret);
        }
        self.footprint
            .set(footprint::weigh(held.as_ref(), &remembered));
        Ok(bearer)
    }
}

#[cfg(test)]
mod tests;
