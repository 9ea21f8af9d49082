//! The authorizer's path through a token store shared by processes: load, use a fresh
//! token another process saved; else take the row's lease, load again (the holder
//! before may have renewed), renew, save (compare-and-swap) before the new token is
//! used, release. A lease another process holds is waited for, with a bounded backoff,
//! until its token is saved or the lease expires (its holder died) and is taken over.
//! What to do next is decided by [`plan`], a pure function.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use brain_mcp_proto::auth::HttpUrl;
use brain_mcp_transport::BearerToken;

use super::flow::STEP_DEADLINE;
use super::footprint::Footprint;
use super::held::Held;
use super::saving::{Saved, Saving};
use super::store::{Lease, StoreError, TokenKey, TokenStore, Version, Versioned};
use super::{AuthFailure, Authorizer, Credentials, Flight, Net, OAuthClient, lock};

/// Waits between looks at a row another process has leased: from the first to the most.
const FIRST_WAIT: Duration = Duration::from_millis(20);
const MOST_WAIT: Duration = Duration::from_millis(500);

/// What the authorizer keeps about the shared store: the version of the row the held
/// tokens are, its name for the row's client, and its name as a lease holder.
#[derive(Debug)]
pub(super) struct Shared {
    version: Arc<Mutex<Option<Version>>>,
    client_key: String,
    holder: String,
    /// The authorizer itself, for a renewal run in a task of its own (none for an
    /// authorizer not made by [`Authorizer::new_shared`]: it renews within the call).
    me: Weak<Authorizer>,
    /// Held by a renewal until its tokens are saved, also past the call that started
    /// it: another call of this authorizer never refreshes with the same token.
    renewing: Arc<tokio::sync::Mutex<()>>,
    /// Set while a renewal's tokens are held but not yet saved: no call sends them.
    pub(super) unsaved: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub(super) fn new(client: &OAuthClient) -> Self {
        let fingerprint = Credentials::of(client)
            .map(|c| c.fingerprint())
            .unwrap_or_default();
        let text = format!(
            "{:?}|{:?}|{:?}|{fingerprint}|{:?}",
            client.issuer,
            client.client_id,
            client.scopes,
            client.delegated.as_ref().map(|d| &d.redirect_uri),
        );
        let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        let mut nonce = [0u8; 8];
        // Without randomness the holder is named by process and time, still unique
        // enough to tell holders apart.
        let random = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce)
            .map(|()| URL_SAFE_NO_PAD.encode(nonce))
            .unwrap_or_else(|_| format!("{:?}", Instant::now()));
        Self {
            version: Arc::new(Mutex::new(None)),
            client_key: URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]),
            holder: format!("{}-{random}", std::process::id()),
            me: Weak::new(),
            renewing: Arc::new(tokio::sync::Mutex::new(())),
            unsaved: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// What a step of the shared path found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// A load: whether the row's token is fresh (and not one refused), and whether this
    /// authorizer holds the lease.
    Loaded { fresh: bool, leased: bool },
    /// Asking for the lease got this, after `waited` in all and `waits` waits.
    Leasing {
        lease: Lease,
        waited: Duration,
        waits: u32,
    },
}

/// What the authorizer does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Send the token loaded.
    Use,
    /// Ask for the lease.
    TakeLease,
    /// Load again (the lease was just granted: the holder before may have renewed).
    Reload,
    /// Renew the token (the lease is held), save it, then send it.
    Renew,
    /// Wait this long, then load again.
    Wait(Duration),
    /// The lease stayed held past `budget`: fail.
    GiveUp,
}

/// The next step after `found`, now `now`, waiting `budget` at most in all.
pub(super) fn plan(found: Found, now: SystemTime, budget: Duration) -> Next {
    match found {
        Found::Loaded { fresh: true, .. } => Next::Use,
        Found::Loaded { leased: true, .. } => Next::Renew,
        Found::Loaded { .. } => Next::TakeLease,
        Found::Leasing {
            lease: Lease::Granted,
            ..
        } => Next::Reload,
        Found::Leasing {
            lease: Lease::Held { until },
            waited,
            waits,
        } => {
            let backoff = FIRST_WAIT.saturating_mul(1 << waits.min(10)).min(MOST_WAIT);
            // Look again just after the lease expires, to take it over at once.
            let expiry = until.duration_since(now).unwrap_or_default() + FIRST_WAIT;
            let wait = backoff.min(expiry);
            if waited + wait > budget {
                Next::GiveUp
            } else {
                Next::Wait(wait)
            }
        }
    }
}

/// Releases a lease when dropped without [`Release::now`] (a call cancelled at its
/// deadline), so the others need not wait for its expiry. Once a token is asked for,
/// the renewal owns the lease (`done`): see [`Authorizer::renew_and_save`].
struct Release {
    store: Arc<dyn TokenStore>,
    key: TokenKey,
    holder: String,
    done: bool,
}

impl Release {
    async fn now(mut self) {
        self.done = true;
        // A release that fails leaves the lease to expire: nothing else to do.
        let _ = self.store.release(&self.key, &self.holder).await;
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (store, key, holder) = (
                self.store.clone(),
                self.key.clone(),
                std::mem::take(&mut self.holder),
            );
            runtime.spawn(async move {
                let _ = store.release(&key, &holder).await;
            });
        }
    }
}

/// A store's failure as the call's: `authorization_failed`, its fault `token_store`.
fn failed(error: &StoreError) -> AuthFailure {
    AuthFailure::store(format!(
        "authorization: the token store ({}): {error}",
        error.kind().as_str()
    ))
}

impl Authorizer {
    /// An authorizer for `client` that knows itself, so its renewals through a shared
    /// store run in tasks of their own.
    pub(super) fn new_shared(client: &OAuthClient, footprint: Footprint) -> Arc<Self> {
        Arc::new_cyclic(|me| {
            let mut authorizer = Self::new(client, footprint);
            authorizer.shared.me = me.clone();
            authorizer
        })
    }

    /// The row of the tokens for the server at `server`: a user's are the principal's,
    /// machine tokens (no user delegates) the client's alone, shared by every principal.
    pub(super) fn store_key(&self, server: &HttpUrl) -> TokenKey {
        let machine = self.client.delegated.is_none() && self.client.enterprise.is_none();
        let principal = self.client.principal.as_deref().filter(|_| !machine);
        TokenKey::new(principal, &server.canonical(), &self.shared.client_key)
    }

    /// Holds the tokens of `found` if they are a version not held yet (refused if the
    /// server refused that very token); the token to send now, if fresh.
    pub(super) fn adopt(&self, found: Option<Versioned>) -> Option<BearerToken> {
        let Some(found) = found else {
            // The row is gone (never saved, or deleted): a save must expect none.
            *lock(&self.shared.version) = None;
            return self.bearer();
        };
        let mut version = lock(&self.shared.version);
        if *version == Some(found.version) {
            return self.bearer();
        }
        *version = Some(found.version);
        drop(version);
        let mut held = lock(&self.held);
        let refused = held
            .as_ref()
            .filter(|h| h.life.is_refused())
            .map(|h| h.token.expose().to_owned());
        if let Some(mut new) = Held::from_stored(found.tokens) {
            if refused.as_deref() == Some(new.token.expose()) {
                new.refuse();
            }
            if let Some(old) = held.replace(new) {
                lock(&self.remembered).retire(&old);
            }
        }
        drop(held);
        self.reweigh();
        self.bearer()
    }

    /// Whether the token held was granted every scope in `wanted` (as far as known: a
    /// token whose scope was not said is taken to have it).
    fn covers(&self, wanted: Option<&str>) -> bool {
        let held = self.held().and_then(|h| h.scope);
        match (held, wanted) {
            (Some(held), Some(wanted)) => wanted
                .split(' ')
                .filter(|s| !s.is_empty())
                .all(|w| held.split(' ').any(|h| h == w)),
            _ => true,
        }
    }

    /// The row's tokens, adopted: the token to send now, if fresh.
    pub(super) async fn reload(
        &self,
        store: &dyn TokenStore,
        key: &TokenKey,
    ) -> Result<Option<BearerToken>, AuthFailure> {
        let found = store.load(key).await.map_err(|e| failed(&e))?;
        Ok(self.adopt(found))
    }

    /// A new token through the shared store `store`: one another process saved, else one
    /// renewed under the row's lease and saved before it is returned.
    pub(super) async fn get_shared(
        &self,
        store: Arc<dyn TokenStore>,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        scope: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        let key = self.store_key(server);
        let renewing = self.shared.renewing.clone().lock_owned().await;
        let ttl = store.lease_ttl();
        let budget = lease_and_step(&*store);
        let (mut waited, mut waits) = (Duration::ZERO, 0);
        let mut found = None;
        let mut step = Found::Loaded {
            fresh: false,
            leased: false,
        };
        let mut next = Next::Reload;
        let guard = loop {
            match next {
                Next::Reload => {
                    found = self.reload(store.as_ref(), &key).await?;
                    step = Found::Loaded {
                        fresh: found.is_some() && self.covers(scope.as_deref()),
                        leased: false,
                    };
                }
                Next::TakeLease => {
                    let lease = store
                        .lease(&key, &self.shared.holder, ttl)
                        .await
                        .map_err(|e| failed(&e))?;
                    if lease == Lease::Granted {
                        break Release {
                            store: store.clone(),
                            key: key.clone(),
                            holder: self.shared.holder.clone(),
                            done: false,
                        };
                    }
                    step = Found::Leasing {
                        lease,
                        waited,
                        waits,
                    };
                }
                Next::Wait(wait) => {
                    tokio::time::sleep(wait).await;
                    (waited, waits) = (waited + wait, waits + 1);
                    next = Next::Reload;
                    continue;
                }
                Next::Use => return found.ok_or_else(|| AuthFailure::host("no token")),
                Next::GiveUp => {
                    return Err(AuthFailure::store(format!(
                        "authorization: the token store's lease for this server stayed held \
                         by another process for {}s",
                        waited.as_secs()
                    )));
                }
                Next::Renew => unreachable_renew()?,
            }
            next = plan(step, SystemTime::now(), budget);
        };
        self.renew_leased(guard, renewing, net, flight, server, scope)
            .await
    }

    /// Under the lease: load again, use what the holder before saved if fresh, else
    /// renew, save, and only then hand the token out (see [`Saving`]).
    async fn renew_leased(
        &self,
        mut guard: Release,
        renewing: tokio::sync::OwnedMutexGuard<()>,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        scope: Option<String>,
    ) -> Result<BearerToken, AuthFailure> {
        let (store, key) = (guard.store.clone(), guard.key.clone());
        let found = self.reload(store.as_ref(), &key).await;
        let fresh = matches!(&found, Ok(Some(_))) && self.covers(scope.as_deref());
        let step = Found::Loaded {
            fresh,
            leased: true,
        };
        match found {
            Ok(Some(token)) if plan(step, SystemTime::now(), Duration::ZERO) == Next::Use => {
                guard.now().await;
                return Ok(token);
            }
            Err(error) => {
                guard.now().await;
                return Err(error);
            }
            Ok(_) => {}
        }
        // The lease is extended right before the token request: the request and the
        // save then have the whole ttl.
        match store.lease(&key, &guard.holder, store.lease_ttl()).await {
            Ok(Lease::Granted) => {}
            Ok(Lease::Held { .. }) => {
                guard.done = true;
                return Err(AuthFailure::store(
                    "authorization: the token store's lease expired before the token request \
                     (token_store.lease_seconds is too short)",
                ));
            }
            Err(error) => {
                guard.now().await;
                return Err(failed(&error));
            }
        }
        let holder = std::mem::take(&mut guard.holder);
        // From here the renewal owns the lease: it releases it once its tokens are saved
        // (or it got none), else leaves it to expire.
        guard.done = true;
        let Some(me) = self.shared.me.upgrade() else {
            return self
                .renew_and_save(net, flight, server, scope, store, key, holder)
                .await;
        };
        // Once the authorization server has answered, the refresh token sent is spent:
        // the request and the save run in a task of their own, which a cancelled call
        // does not cut short.
        let (http, destinations) = (net.http.clone(), net.destinations);
        let authority = flight.authority.clone();
        let server = server.clone();
        // Bounded by the lease and one step (the waits' budget): a user's approval (a
        // delegated client's first grant) waits on the host's handler, which may never
        // answer.
        let bound = lease_and_step(&*store);
        let task = tokio::spawn(async move {
            let _renewing = renewing;
            let net = Net {
                http: &http,
                destinations,
            };
            let mut flight = Flight {
                authority,
                ..Flight::default()
            };
            let work = me.renew_and_save(&net, &mut flight, &server, scope, store, key, holder);
            tokio::time::timeout(bound, work).await.unwrap_or_else(|_| {
                Err(AuthFailure::host(
                    "authorization: the renewal took longer than its lease",
                ))
            })
        });
        task.await.unwrap_or_else(|_| {
            Err(AuthFailure::host(
                "authorization: the renewal's task ended early",
            ))
        })
    }

    /// Renews (the lease held by `holder`), saves (see [`Saving`]), and only then hands
    /// the token out.
    #[allow(clippy::too_many_arguments)]
    async fn renew_and_save(
        &self,
        net: &Net<'_>,
        flight: &mut Flight,
        server: &HttpUrl,
        scope: Option<String>,
        store: Arc<dyn TokenStore>,
        key: TokenKey,
        holder: String,
    ) -> Result<BearerToken, AuthFailure> {
        // Tokens renewed here are held before they are saved: until then no call of
        // this authorizer may send them (`bearer` reads this).
        self.shared.unsaved.store(true, Ordering::Release);
        let _unsaved = Unsaved(&self.shared.unsaved);
        let token = match self.fetch(net, flight, server, scope).await {
            Ok(token) => token,
            Err(error) => {
                // Nothing new held: no refresh token waits to be saved.
                let _ = store.release(&key, &holder).await;
                return Err(error);
            }
        };
        let expected = *lock(&self.shared.version);
        let Some(tokens) = self.held().map(|h| h.to_stored()) else {
            return Err(AuthFailure::host(
                "authorization: no token held after renewal",
            ));
        };
        let saving = Saving {
            store: store.clone(),
            key: key.clone(),
            holder,
            expected,
            tokens,
            version: self.shared.version.clone(),
        };
        match saving.run().await {
            Saved::Done => Ok(token),
            Saved::Theirs => {
                self.refuse_held();
                self.reload(store.as_ref(), &key).await?.ok_or_else(|| {
                    AuthFailure::store("authorization: the token store's row changed twice")
                })
            }
            Saved::Failed(error) => {
                // Never send a token whose refresh token is not saved; it stays held,
                // to be saved by this process's next renewal while the lease lasts.
                self.refuse_held();
                Err(AuthFailure::store(format!(
                    "authorization: the renewed tokens could not be saved to the token store \
                     ({}): {error}; they are not used, and the lease is left to expire",
                    error.kind().as_str()
                )))
            }
        }
    }

    /// Marks the token held refused: it is never sent.
    fn refuse_held(&self) {
        if let Some(held) = lock(&self.held).as_mut() {
            held.refuse();
        }
    }
}

/// The loop above never plans a renewal before the lease is granted (it breaks out).
fn unreachable_renew() -> Result<(), AuthFailure> {
    Err(AuthFailure::host(
        "authorization: a renewal was planned without the lease",
    ))
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;

impl Authorizer {
    /// Weighs what is held again, after it changed.
    pub(super) fn reweigh(&self) {
        let held = lock(&self.held);
        let remembered = lock(&self.remembered);
        self.footprint
            .set(super::footprint::weigh(held.as_ref(), &remembered));
    }
}

/// Clears [`Shared::unsaved`] when a renewal ends, however it ends.
struct Unsaved<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for Unsaved<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Authorizer {
    /// The token to send now, if one is held and not about to expire.
    pub(crate) fn bearer(&self) -> Option<BearerToken> {
        self.sendable(Held::fresh)
    }

    /// The token for a message that closes or follows up work (a cancel, a session's
    /// end, `notifications/initialized`): the one held while it has not expired, inside
    /// its renewal margin too; none once refused or expired.
    pub(crate) fn bearer_for_cleanup(&self) -> Option<BearerToken> {
        self.sendable(Held::usable)
    }

    /// The held token when `good` says so now; none while a renewed token is not saved
    /// yet (see [`Shared::unsaved`]).
    fn sendable(&self, good: fn(&Held, Instant) -> bool) -> Option<BearerToken> {
        if self.shared.unsaved.load(Ordering::Acquire) {
            return None;
        }
        self.held()
            .filter(|h| good(h, Instant::now()))
            .map(|h| h.token)
    }
}

/// How long a renewal may take in all: the store's lease, which a holder keeps while it
/// renews, and one step to save what it got.
fn lease_and_step(store: &dyn TokenStore) -> Duration {
    store.lease_ttl() + STEP_DEADLINE
}
