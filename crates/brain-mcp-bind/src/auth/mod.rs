//! OAuth for HTTP servers: the tokens of one client for one server, got when the server
//! asks for one, shared by every call, and renewed before they expire.
//!
//! The core decides the protocol (`brain_mcp_proto::auth`: where metadata is, whether it
//! is believed, the forms, what a refusal means); this module runs the exchanges and
//! holds the tokens. A client with a secret is pinned to its configured issuer: a
//! server's metadata that names another authorization server ends the search before
//! any secret is sent.

pub(crate) mod credentials;
mod flow;
mod given;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brain_mcp_proto::auth::token::Grant;
use brain_mcp_proto::auth::{Authority, BearerChallenge, HttpUrl, Token, scope};
use brain_mcp_proto::text::Secrets;
use brain_mcp_transport::{BearerToken, HttpClient};

pub(crate) use credentials::Credentials;
pub use given::{ClientProof, Credential, CredentialSource, OAuthClient};

/// A token this close to its expiry is renewed before it is used.
const RENEW_MARGIN: Duration = Duration::from_secs(30);

/// The tokens of one client (credentials, issuer, scopes) for one server.
#[derive(Debug)]
pub(crate) struct Authorizer {
    credentials: Credentials,
    /// The only issuer credentials go to; `None` trusts the server's metadata.
    issuer: Option<String>,
    scopes: Option<String>,
    held: Mutex<Option<Held>>,
    /// One token request at a time; holds the authority once found.
    flight: tokio::sync::Mutex<Option<Authority>>,
}

#[derive(Clone)]
struct Held {
    token: BearerToken,
    expires: Option<Instant>,
    refresh: Option<String>,
    scope: Option<String>,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

impl Held {
    fn fresh(&self, now: Instant) -> bool {
        self.expires.is_none_or(|at| at > now + RENEW_MARGIN)
    }
}

impl Authorizer {
    fn new(client: &OAuthClient) -> Self {
        let scopes = client.scopes.join(" ");
        Self {
            credentials: Credentials::of(client),
            issuer: client.issuer.clone(),
            scopes: (!scopes.is_empty()).then_some(scopes),
            held: Mutex::new(None),
            flight: tokio::sync::Mutex::new(None),
        }
    }

    fn held(&self) -> Option<Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The token to send now, if one is held and not about to expire.
    pub(crate) fn bearer(&self) -> Option<BearerToken> {
        self.held()
            .filter(|h| h.fresh(Instant::now()))
            .map(|h| h.token)
    }

    /// The tokens held, to remove from everything a server says.
    pub(crate) fn secrets(&self) -> Secrets {
        match self.held() {
            Some(h) => Secrets::new([h.token.expose().to_owned()]).with(h.refresh),
            None => Secrets::none(),
        }
    }

    /// The scope of the token held, or the configured one.
    pub(crate) fn scope(&self) -> Option<String> {
        self.held()
            .and_then(|h| h.scope)
            .or_else(|| self.scopes.clone())
    }

    /// The token for a request about to go: the one held; else, once the server's
    /// authority is known, a new one; else none (the server's 401 will say where to go).
    pub(crate) async fn prepare(&self, http: &HttpClient) -> Result<Option<BearerToken>, String> {
        if let Some(token) = self.bearer() {
            return Ok(Some(token));
        }
        let flight = self.flight.lock().await;
        if let Some(token) = self.bearer() {
            return Ok(Some(token));
        }
        match flight.as_ref() {
            Some(authority) => self.get(http, authority, None).await.map(Some),
            None => Ok(None),
        }
    }

    /// A token after the server refused `refused` (or a request without one) with
    /// `challenge`; `step_up` is the wider scope to ask for after `insufficient_scope`.
    /// Calls refused together share one token request.
    pub(crate) async fn authorize(
        &self,
        http: &HttpClient,
        server: &HttpUrl,
        challenge: Option<&BearerChallenge>,
        refused: Option<&BearerToken>,
        step_up: Option<String>,
    ) -> Result<BearerToken, String> {
        let mut flight = self.flight.lock().await;
        if step_up.is_none()
            && let Some(token) = self.bearer()
            && Some(&token) != refused
        {
            // Another call got a new token while this one waited.
            return Ok(token);
        }
        if refused.is_some() {
            // The server refused it: never send it again.
            *self
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
        if flight.is_none() {
            *flight = Some(flow::find(http, server, challenge, self.issuer.as_deref()).await?);
        }
        let authority = flight.as_ref().ok_or("authorization: no authority")?;
        let wanted = step_up.or_else(|| {
            self.scopes.clone().or_else(|| {
                scope::first_scope(
                    challenge.and_then(|c| c.scope.as_deref()),
                    authority.scopes_supported.as_deref(),
                )
            })
        });
        self.get(http, authority, wanted).await
    }

    /// A new token from `authority`: by refresh token when one is held, else by the
    /// client credentials grant.
    async fn get(
        &self,
        http: &HttpClient,
        authority: &Authority,
        scope: Option<String>,
    ) -> Result<BearerToken, String> {
        let scope = scope.or_else(|| self.scope());
        let refresh = self.held().and_then(|h| h.refresh);
        let token = match refresh {
            Some(refresh) => {
                let refreshed = flow::token(
                    http,
                    authority,
                    &self.credentials,
                    Grant::Refresh(&refresh),
                    scope.as_deref(),
                )
                .await;
                match refreshed {
                    Ok(token) => token,
                    Err(_) => {
                        flow::token(
                            http,
                            authority,
                            &self.credentials,
                            Grant::ClientCredentials,
                            scope.as_deref(),
                        )
                        .await?
                    }
                }
            }
            None => {
                flow::token(
                    http,
                    authority,
                    &self.credentials,
                    Grant::ClientCredentials,
                    scope.as_deref(),
                )
                .await?
            }
        };
        Ok(self.keep(token, scope))
    }

    fn keep(&self, token: Token, asked: Option<String>) -> BearerToken {
        let bearer = BearerToken::new(token.access_token.clone());
        let held = Held {
            token: bearer.clone(),
            expires: token
                .expires_in
                .map(|s| Instant::now() + Duration::from_secs(s)),
            refresh: token.refresh_token.clone(),
            scope: token.scope.clone().or(asked),
        };
        *self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(held);
        bearer
    }
}

/// The most authorizers kept; past it, ones no call holds are dropped.
const MAX_AUTHORIZERS: usize = 4096;

/// The authorizers of a client, one per server and client credentials: every call with
/// the same credentials for the same server shares its tokens.
#[derive(Debug, Default)]
pub(crate) struct Authorizers {
    map: Mutex<HashMap<Key, Arc<Authorizer>>>,
}

/// Server, issuer, client id, scopes and a digest of the proof.
type Key = (String, Option<String>, String, Vec<String>, String);

impl Authorizers {
    /// The authorizer of `client` for the server at `server_key`.
    pub(crate) fn get(&self, server_key: &str, client: &OAuthClient) -> Arc<Authorizer> {
        let key = (
            server_key.to_owned(),
            client.issuer.clone(),
            client.client_id.clone(),
            client.scopes.clone(),
            Credentials::of(client).fingerprint(),
        );
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() >= MAX_AUTHORIZERS && !map.contains_key(&key) {
            map.retain(|_, a| Arc::strong_count(a) > 1);
        }
        map.entry(key)
            .or_insert_with(|| Arc::new(Authorizer::new(client)))
            .clone()
    }
}
