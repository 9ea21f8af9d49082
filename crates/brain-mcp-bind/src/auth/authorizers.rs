//! Every authorizer of a client, one per server and credentials: calls with the same
//! credentials for the same server (and principal) share its tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{Authorizer, Credentials, OAuthClient, lock};

/// The most authorizers kept; past it, ones no call holds are dropped.
const MAX_AUTHORIZERS: usize = 4096;

/// The authorizers of a client, one per server and client: every call with the same
/// credentials for the same server (and principal) shares its tokens.
#[derive(Default)]
pub(crate) struct Authorizers {
    map: Mutex<HashMap<Key, Arc<Authorizer>>>,
}

impl std::fmt::Debug for Authorizers {
    /// The count only: a key holds a digest of a client secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizers")
            .field("count", &lock(&self.map).len())
            .finish()
    }
}

/// Server, issuer, client id, scopes, principal, a digest of the proof, and whether the
/// user delegates.
type Key = (
    String,
    Option<String>,
    Option<String>,
    Vec<String>,
    Option<String>,
    String,
    bool,
);

impl Authorizers {
    /// The authorizer of `client` for the server at `server_key`.
    pub(crate) fn get(&self, server_key: &str, client: &OAuthClient) -> Arc<Authorizer> {
        let mut fingerprint = Credentials::of(client)
            .map(|c| c.fingerprint())
            .unwrap_or_default();
        if client.dpop {
            fingerprint.push_str("+dpop");
        }
        let key = (
            server_key.to_owned(),
            client.issuer.clone(),
            client.client_id.clone(),
            client.scopes.clone(),
            client.principal.clone(),
            fingerprint,
            client.delegated.is_some(),
        );
        let mut map = lock(&self.map);
        if map.len() >= MAX_AUTHORIZERS && !map.contains_key(&key) {
            map.retain(|_, a| Arc::strong_count(a) > 1);
        }
        map.entry(key)
            .or_insert_with(|| Arc::new(Authorizer::new(client)))
            .clone()
    }
}
