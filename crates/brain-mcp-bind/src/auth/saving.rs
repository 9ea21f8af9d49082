//! Saving tokens the authorization server has just issued, under the row's lease. Once
//! the server answered a refresh, the refresh token sent is spent: the new one must
//! reach the store before anyone else refreshes. So the save runs in the renewal's task
//! of its own (a call cancelled at its deadline does not cut it short), is tried again
//! while the
//! lease can be kept (extending it before each try), and releases the lease only once
//! the tokens are saved. A save that fails for good keeps the lease: it expires on its
//! own, and the call fails.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::store::{
    Lease, StoreError, StoreErrorKind, StoredTokens, TokenKey, TokenStore, Version,
};

/// Waits between tries of a save: from the first to the most.
const FIRST_RETRY: Duration = Duration::from_millis(50);
const MOST_RETRY: Duration = Duration::from_secs(1);
/// Saves that found the row gone are tried again this often at most (each with no
/// version expected): a row deleted again and again is a fault of its own.
const VANISHED_TRIES: u32 = 3;

/// A save of newly issued tokens: where, by which lease holder, replacing which version.
pub(super) struct Saving {
    pub(super) store: Arc<dyn TokenStore>,
    pub(super) key: TokenKey,
    pub(super) holder: String,
    pub(super) expected: Option<Version>,
    pub(super) tokens: StoredTokens,
    /// The authorizer's note of the version it holds, set once saved.
    pub(super) version: Arc<Mutex<Option<Version>>>,
}

/// How a save ended.
#[derive(Debug)]
pub(super) enum Saved {
    /// Saved (the version noted); the lease released.
    Done,
    /// Another holder saved first (this one's lease had expired): theirs stand.
    Theirs,
    /// Not saved within the lease: the lease is kept until it expires.
    Failed(StoreError),
}

impl Saving {
    /// Tries the save until it is done, another holder's tokens stand, or the lease can
    /// no longer be kept (its ttl spent retrying, or another holder took it).
    pub(super) async fn run(mut self) -> Saved {
        let ttl = self.store.lease_ttl();
        let started = Instant::now();
        let (mut wait, mut vanished) = (FIRST_RETRY, 0);
        loop {
            let error = match self
                .store
                .save(&self.key, self.expected, &self.tokens)
                .await
            {
                Ok(version) => {
                    *self.version.lock().unwrap_or_else(PoisonError::into_inner) = Some(version);
                    // A release that fails leaves the lease to expire: nothing else to do.
                    let _ = self.store.release(&self.key, &self.holder).await;
                    return Saved::Done;
                }
                Err(error) => error,
            };
            if error.kind() == StoreErrorKind::Conflict {
                match self.store.load(&self.key).await {
                    // The row was deleted since it was loaded: save it anew.
                    Ok(None) if vanished < VANISHED_TRIES => {
                        vanished += 1;
                        self.expected = None;
                        continue;
                    }
                    Ok(None) => return Saved::Failed(error),
                    // A save of ours that committed but whose answer was lost: the row
                    // holds exactly these tokens, saved.
                    Ok(Some(row)) if same_tokens(&row.tokens, &self.tokens) => {
                        let version = Some(row.version);
                        *self.version.lock().unwrap_or_else(PoisonError::into_inner) = version;
                        let _ = self.store.release(&self.key, &self.holder).await;
                        return Saved::Done;
                    }
                    Ok(Some(_)) => {
                        let _ = self.store.release(&self.key, &self.holder).await;
                        return Saved::Theirs;
                    }
                    Err(_) => {}
                }
            }
            if started.elapsed() + wait >= ttl {
                return Saved::Failed(error);
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(MOST_RETRY);
            // Keep the lease for the next try; lost to another holder, stop.
            if let Ok(Lease::Held { .. }) = self.store.lease(&self.key, &self.holder, ttl).await {
                return Saved::Failed(error);
            }
        }
    }
}

/// Whether a row holds the very tokens this save was writing (compared in full: a
/// refresh token is issued once, so another holder's never matches).
fn same_tokens(row: &StoredTokens, ours: &StoredTokens) -> bool {
    let expose = |s: &Option<brain_tools_core::Secret>| s.as_ref().map(|s| s.expose().to_owned());
    expose(&row.refresh_token) == expose(&ours.refresh_token)
        && expose(&row.access_token) == expose(&ours.access_token)
        && (ours.refresh_token.is_some() || ours.access_token.is_some())
}
