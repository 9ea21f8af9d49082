//! The in-process token store: the shared-store contract kept in a map, for a host of
//! one process (and for testing the contract).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::lock;
use super::store::StoredTokens;
use super::store::{
    DEFAULT_LEASE_TTL, Lease, StoreError, TokenKey, TokenStore, Version, Versioned,
};

/// The versions of every store in this process: a row deleted (forgotten) and saved
/// again never gets a version it had before, so a save naming an old one fails.
static VERSIONS: AtomicU64 = AtomicU64::new(0);

/// Rows kept unless [`MemoryTokenStore::with_capacity`] says otherwise.
const CAPACITY: usize = 65_536;

/// A [`TokenStore`] in this process's memory, keeping the same contract as a shared one
/// (versions, compare-and-swap saves, leases that expire), bounded in rows: past its
/// capacity the least recently used row nobody leases is forgotten (costing a token
/// request later; the authorizer that held it saves anew). A leased row is never
/// forgotten: rows leased at once may pass the capacity. Its `Debug` shows the row
/// count.
pub struct MemoryTokenStore {
    rows: Mutex<HashMap<TokenKey, Row>>,
    /// A count of uses, marking each row's last one.
    uses: AtomicU64,
    capacity: usize,
    ttl: Duration,
}

#[derive(Default)]
struct Row {
    version: u64,
    used: u64,
    tokens: Option<StoredTokens>,
    lease: Option<(String, SystemTime)>,
}

impl std::fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTokenStore")
            .field("rows", &lock(&self.rows).len())
            .finish_non_exhaustive()
    }
}

impl Default for MemoryTokenStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            rows: Mutex::new(HashMap::new()),
            uses: AtomicU64::new(0),
            capacity: CAPACITY,
            ttl: DEFAULT_LEASE_TTL,
        }
    }

    /// The store keeping at most `rows` rows (at least one).
    #[must_use]
    pub fn with_capacity(mut self, rows: usize) -> Self {
        self.capacity = rows.max(1);
        self
    }

    /// Leases asked for `ttl`.
    #[must_use]
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        lock(&self.rows).len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row of `key`, made (forgetting the least recently used unleased one past
    /// capacity) if missing, marked used now.
    fn row<'a>(&self, rows: &'a mut HashMap<TokenKey, Row>, key: &TokenKey) -> &'a mut Row {
        if rows.len() >= self.capacity && !rows.contains_key(key) {
            let now = SystemTime::now();
            let idle = rows
                .iter()
                .filter(|(_, r)| r.lease.as_ref().is_none_or(|(_, until)| *until <= now))
                .min_by_key(|(_, r)| r.used)
                .map(|(k, _)| k.clone());
            if let Some(idle) = idle {
                rows.remove(&idle);
            }
        }
        let row = rows.entry(key.clone()).or_default();
        row.used = self.uses.fetch_add(1, Ordering::Relaxed);
        row
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError> {
        let mut rows = lock(&self.rows);
        Ok(rows.get_mut(key).and_then(|row| {
            row.used = self.uses.fetch_add(1, Ordering::Relaxed);
            row.tokens
                .clone()
                .map(|t| Versioned::new(Version::new(row.version), t))
        }))
    }

    async fn save(
        &self,
        key: &TokenKey,
        expected: Option<Version>,
        tokens: &StoredTokens,
    ) -> Result<Version, StoreError> {
        let mut rows = lock(&self.rows);
        let current = rows
            .get(key)
            .filter(|r| r.tokens.is_some())
            .map(|r| Version::new(r.version));
        if current != expected {
            return Err(StoreError::conflict());
        }
        let row = self.row(&mut rows, key);
        row.version = VERSIONS.fetch_add(1, Ordering::Relaxed) + 1;
        row.tokens = Some(tokens.clone());
        Ok(Version::new(row.version))
    }

    async fn lease(
        &self,
        key: &TokenKey,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        let mut rows = lock(&self.rows);
        let row = self.row(&mut rows, key);
        let now = SystemTime::now();
        if let Some((other, until)) = &row.lease
            && other != holder
            && *until > now
        {
            return Ok(Lease::Held { until: *until });
        }
        row.lease = Some((holder.to_owned(), now + ttl));
        Ok(Lease::Granted)
    }

    async fn release(&self, key: &TokenKey, holder: &str) -> Result<(), StoreError> {
        let mut rows = lock(&self.rows);
        if let Some(row) = rows.get_mut(key)
            && row.lease.as_ref().is_some_and(|(h, _)| h == holder)
        {
            row.lease = None;
            if row.tokens.is_none() {
                rows.remove(key);
            }
        }
        Ok(())
    }

    fn lease_ttl(&self) -> Duration {
        self.ttl
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::StoreErrorKind;

    fn key(p: &str) -> TokenKey {
        TokenKey::new(Some(p), "https://mcp.example", "c")
    }

    #[tokio::test]
    async fn saves_are_compare_and_swap() {
        let store = MemoryTokenStore::new();
        let k = key("alice");
        assert_eq!(store.load(&k).await.unwrap(), None);
        let first = store.save(&k, None, &StoredTokens::new("i")).await.unwrap();
        let again = store.save(&k, None, &StoredTokens::new("i")).await;
        assert_eq!(again.unwrap_err().kind(), StoreErrorKind::Conflict);
        let second = store
            .save(&k, Some(first), &StoredTokens::new("j"))
            .await
            .unwrap();
        assert_ne!(first, second);
        let stale = store.save(&k, Some(first), &StoredTokens::new("k")).await;
        assert_eq!(stale.unwrap_err().kind(), StoreErrorKind::Conflict);
        let loaded = store.load(&k).await.unwrap().unwrap();
        assert_eq!(
            (loaded.version, loaded.tokens.issuer.as_str()),
            (second, "j")
        );
        assert_eq!(
            store.load(&key("bob")).await.unwrap(),
            None,
            "rows are per key"
        );
    }

    #[tokio::test]
    async fn a_lease_is_one_holders_until_released_or_expired() {
        let store = MemoryTokenStore::new();
        let k = key("alice");
        let long = Duration::from_secs(60);
        assert_eq!(store.lease(&k, "a", long).await.unwrap(), Lease::Granted);
        assert!(matches!(
            store.lease(&k, "b", long).await.unwrap(),
            Lease::Held { until } if until > SystemTime::now()
        ));
        assert_eq!(store.lease(&k, "a", long).await.unwrap(), Lease::Granted);
        store.release(&k, "b").await.unwrap();
        assert!(matches!(
            store.lease(&k, "b", long).await.unwrap(),
            Lease::Held { .. }
        ));
        store.release(&k, "a").await.unwrap();
        assert_eq!(
            store.lease(&k, "b", Duration::ZERO).await.unwrap(),
            Lease::Granted
        );
        // b's lease has expired at once (ttl zero): a holder that died blocks no one.
        assert_eq!(store.lease(&k, "c", long).await.unwrap(), Lease::Granted);
        assert!(store.is_empty() || store.len() == 1);
    }

    #[tokio::test]
    async fn rows_are_bounded_and_leased_ones_kept() {
        let store = MemoryTokenStore::new().with_capacity(2);
        let long = Duration::from_secs(60);
        assert_eq!(
            store.lease(&key("a"), "h", long).await.unwrap(),
            Lease::Granted
        );
        for p in ["b", "c", "d"] {
            store
                .save(&key(p), None, &StoredTokens::new("i"))
                .await
                .unwrap();
        }
        assert_eq!(store.len(), 2);
        assert!(matches!(
            store.lease(&key("a"), "other", long).await.unwrap(),
            Lease::Held { .. }
        ));
        assert!(store.load(&key("d")).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn the_least_recently_used_row_is_forgotten_first() {
        let store = MemoryTokenStore::new().with_capacity(2);
        for p in ["a", "b"] {
            store
                .save(&key(p), None, &StoredTokens::new("i"))
                .await
                .unwrap();
        }
        store.load(&key("a")).await.unwrap();
        store
            .save(&key("c"), None, &StoredTokens::new("i"))
            .await
            .unwrap();
        assert!(store.load(&key("a")).await.unwrap().is_some());
        assert_eq!(store.load(&key("b")).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_row_deleted_and_saved_again_never_repeats_a_version() {
        let store = MemoryTokenStore::new().with_capacity(1);
        let first = store
            .save(&key("a"), None, &StoredTokens::new("i"))
            .await
            .unwrap();
        // b's save forgets a; a saved again must not get the version it had.
        store
            .save(&key("b"), None, &StoredTokens::new("i"))
            .await
            .unwrap();
        let again = store
            .save(&key("a"), None, &StoredTokens::new("i"))
            .await
            .unwrap();
        assert_ne!(first, again);
        let stale = store
            .save(&key("a"), Some(first), &StoredTokens::new("j"))
            .await;
        assert_eq!(stale.unwrap_err().kind(), StoreErrorKind::Conflict);
    }
}
