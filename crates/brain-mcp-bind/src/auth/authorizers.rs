//! Every authorizer of a client, one per server and credentials: calls with the same
//! credentials for the same server (and principal) share its tokens.
//!
//! The pool is bounded in entries and in bytes. Past either bound, the authorizer used
//! least recently that no call holds is dropped, one at a time until the pool is back
//! within both; an authorizer a call holds is in use, so it counts as used now and goes
//! to the recent end. When every authorizer is held the new one is kept anyway: held
//! ones are bounded by the calls in flight, and a call is never refused for it.
//!
//! Each operation is O(log n): a hash map finds the entry, an ordered map of use stamps
//! finds the least recently used.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::footprint::Footprint;
use super::{Authorizer, Credentials, OAuthClient, lock};

/// Authorizers kept at most by default: a host's tenants by the hundred thousand, each
/// with its own credentials for a server, keep their tokens between calls.
pub const DEFAULT_MAX_AUTHORIZERS: usize = 100_000;

/// Bytes of authorizers kept at most by default (as the client estimates them):
/// 512 MiB, the default count at about 5 KiB each (what a tenant with 1 KiB access and
/// refresh tokens and its server's authority weighs; see docs/performance.md).
pub const DEFAULT_MAX_AUTHORIZER_BYTES: usize = 512 << 20;

/// What an entry costs besides the text it holds: the authorizer and its key themselves,
/// one slot in the map and one in the use order, the client's copy in the authorizer,
/// and the allocator's bookkeeping of the authorizer's allocations (about 24 of them with
/// a token held, 16 bytes each). Checked against what `brain-bench tenants` measures.
pub(crate) const ENTRY_OVERHEAD: usize = size_of::<Authorizer>()
    + size_of::<Key>()
    + size_of::<OAuthClient>()
    + 2 * (size_of::<Entry>() + size_of::<Arc<Key>>() + size_of::<u64>())
    + 24 * 16;

/// The authorizers of a client, one per server and client: every call with the same
/// credentials for the same server (and principal) shares its tokens.
pub(crate) struct Authorizers {
    lru: Mutex<Lru>,
    /// What the tokens of every authorizer weigh (each keeps its part up to date).
    tokens: Arc<AtomicUsize>,
}

impl Default for Authorizers {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_AUTHORIZERS, DEFAULT_MAX_AUTHORIZER_BYTES)
    }
}

impl std::fmt::Debug for Authorizers {
    /// Counts and bounds only: a key holds a digest of a client secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lru = lock(&self.lru);
        f.debug_struct("Authorizers")
            .field("count", &lru.map.len())
            .field("bytes", &(lru.fixed + self.tokens.load(Ordering::Relaxed)))
            .field("max_entries", &lru.max_entries)
            .field("max_bytes", &lru.max_bytes)
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

/// One authorizer kept: when it was last used, and what it costs besides its tokens.
struct Entry {
    authorizer: Arc<Authorizer>,
    used: u64,
    fixed: usize,
}

/// The entries, and their order of use.
struct Lru {
    map: HashMap<Arc<Key>, Entry>,
    /// Each entry's key by its last use, least recent first.
    order: BTreeMap<u64, Arc<Key>>,
    /// The last use stamp given.
    clock: u64,
    /// Every entry's fixed cost, added up.
    fixed: usize,
    max_entries: usize,
    max_bytes: usize,
}

impl Lru {
    /// A new stamp of use, later than every other.
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Whether the pool is past a bound, with `tokens` bytes of tokens.
    fn over(&self, tokens: usize) -> bool {
        self.map.len() > self.max_entries || self.fixed + tokens > self.max_bytes
    }

    /// Drops the least recently used authorizers no call holds, one at a time, until the
    /// pool is within its bounds; a held one met on the way counts as used now. Stops
    /// when every entry was looked at once (they are all held).
    fn trim(&mut self, tokens: &AtomicUsize) {
        let mut left = self.map.len();
        while left > 0 && self.over(tokens.load(Ordering::Relaxed)) {
            left -= 1;
            let Some((_, key)) = self.order.pop_first() else {
                return;
            };
            let held = self
                .map
                .get(&key)
                .is_some_and(|e| Arc::strong_count(&e.authorizer) > 1);
            if held {
                let now = self.tick();
                if let Some(entry) = self.map.get_mut(&key) {
                    entry.used = now;
                }
                self.order.insert(now, key);
            } else if let Some(entry) = self.map.remove(&key) {
                self.fixed -= entry.fixed;
                // Dropping the authorizer takes its tokens out of `tokens`.
                drop(entry);
            }
        }
    }
}

impl Authorizers {
    /// A pool keeping at most `max_entries` authorizers and `max_bytes` bytes of them.
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            lru: Mutex::new(Lru {
                map: HashMap::new(),
                order: BTreeMap::new(),
                clock: 0,
                fixed: 0,
                max_entries,
                max_bytes,
            }),
            tokens: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Keeps at most `max_entries` authorizers and `max_bytes` bytes of them from now on,
    /// dropping ones no call holds at once if the pool is past a new bound.
    pub(crate) fn set_limits(&self, max_entries: usize, max_bytes: usize) {
        let mut lru = lock(&self.lru);
        lru.max_entries = max_entries;
        lru.max_bytes = max_bytes;
        lru.trim(&self.tokens);
    }

    /// How many authorizers are kept, and what they weigh by the pool's estimate: each
    /// one's key and token text plus [`ENTRY_OVERHEAD`].
    pub(crate) fn usage(&self) -> (usize, usize) {
        let lru = lock(&self.lru);
        (
            lru.map.len(),
            lru.fixed + self.tokens.load(Ordering::Relaxed),
        )
    }

    /// The authorizer of `client` for the server at `server_key`, now the most recently
    /// used.
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
        let mut lru = lock(&self.lru);
        let now = lru.tick();
        let Lru { map, order, .. } = &mut *lru;
        let found = map.get_mut(&key).and_then(|entry| {
            let key = order.remove(&std::mem::replace(&mut entry.used, now))?;
            order.insert(now, key);
            Some(entry.authorizer.clone())
        });
        let authorizer = if let Some(authorizer) = found {
            authorizer
        } else {
            let fixed = ENTRY_OVERHEAD + text_bytes(&key);
            let key = Arc::new(key);
            let footprint = Footprint::counted_in(self.tokens.clone());
            let authorizer = Authorizer::new_shared(client, footprint);
            order.insert(now, key.clone());
            map.insert(
                key,
                Entry {
                    authorizer: authorizer.clone(),
                    used: now,
                    fixed,
                },
            );
            lru.fixed += fixed;
            authorizer
        };
        // The one just handed out is held, so it stays.
        lru.trim(&self.tokens);
        authorizer
    }
}

/// The bytes of an entry's text besides its tokens: the key's strings, and the copies the
/// authorizer's client keeps of its issuer, client id, principal and scopes (and the
/// scopes once more, joined).
fn text_bytes(key: &Key) -> usize {
    let (server, issuer, client_id, scopes, principal, fingerprint, _) = key;
    let len = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let scopes: usize = scopes.iter().map(String::len).sum();
    server.len()
        + fingerprint.len()
        + 2 * (len(issuer) + len(client_id) + len(principal))
        + 3 * scopes
}

#[cfg(test)]
mod tests;
