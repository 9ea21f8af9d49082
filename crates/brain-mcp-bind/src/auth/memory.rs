//! The in-process token store: the shared-store contract kept in a map, for a host of
//! one process (and for testing the contract).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::lock;
use super::store::StoredTokens;
use super::store::{
    DEFAULT_LEASE_TTL, Lease, StoreError, TokenKey, TokenStore, Version, Versioned,
};

/// Rows kept unless [`MemoryTokenStore::with_capacity`] says otherwise.
const CAPACITY: usize = 65_536;

/// A [`TokenStore`] in this process's memory, keeping the same contract as a shared one
/// (versions, compare-and-swap saves, leases that expire), bounded in rows: past its
/// capacity a row nobody leases is forgotten (costing a token request later). Its
/// `Debug` shows the row count.
pub struct MemoryTokenStore {
    rows: Mutex<HashMap<TokenKey, Row>>,
    capacity: usize,
    ttl: Duration,
}

#[derive(Default)]
struct Row {
    version: u64,
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

    /// The row of `key`, made (forgetting an unleased one past capacity) if missing.
    fn row<'a>(
        rows: &'a mut HashMap<TokenKey, Row>,
        key: &TokenKey,
        capacity: usize,
    ) -> &'a mut Row {
        if rows.len() >= capacity && !rows.contains_key(key) {
            let now = SystemTime::now();
            let idle = rows
                .iter()
                .find(|(_, r)| r.lease.as_ref().is_none_or(|(_, until)| *until <= now))
                .map(|(k, _)| k.clone());
            if let Some(idle) = idle {
                rows.remove(&idle);
            }
        }
        rows.entry(key.clone()).or_default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError> {
        let rows = lock(&self.rows);
        Ok(rows.get(key).and_then(|row| {
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
        let row = Self::row(&mut rows, key, self.capacity);
        row.version += 1;
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
        let row = Self::row(&mut rows, key, self.capacity);
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
}
