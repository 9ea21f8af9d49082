//! What an authorizer's tokens weigh, kept in its pool's running total so the pool knows
//! its bytes without visiting every authorizer (`Authorizers` evicts by it).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use brain_mcp_proto::auth::Authority;

use super::held::{Held, Remembered};

/// The bytes of what one authorizer learns after it is made: the secrets it holds (see
/// [`weigh`]) and its server's authority (see [`weigh_authority`]), added to its pool's
/// total; taken back out when the authorizer is dropped.
#[derive(Debug, Default)]
pub(crate) struct Footprint {
    tokens: AtomicUsize,
    authority: AtomicUsize,
    total: Arc<AtomicUsize>,
}

impl Footprint {
    /// A footprint of nothing yet, counted in `total`.
    pub(crate) fn counted_in(total: Arc<AtomicUsize>) -> Self {
        Self {
            tokens: AtomicUsize::new(0),
            authority: AtomicUsize::new(0),
            total,
        }
    }

    /// The authorizer's secrets now weigh `bytes`.
    pub(super) fn set(&self, bytes: usize) {
        self.replace(&self.tokens, bytes);
    }

    /// The authority the authorizer knows now weighs `bytes`.
    pub(super) fn set_authority(&self, bytes: usize) {
        self.replace(&self.authority, bytes);
    }

    fn replace(&self, part: &AtomicUsize, bytes: usize) {
        // Added before the old weight is taken out, so the total never dips below the
        // truth (nor underflows) while two updates race.
        self.total.fetch_add(bytes, Ordering::Relaxed);
        let old = part.swap(bytes, Ordering::Relaxed);
        self.total.fetch_sub(old, Ordering::Relaxed);
    }
}

impl Drop for Footprint {
    fn drop(&mut self) {
        let own = *self.tokens.get_mut() + *self.authority.get_mut();
        self.total.fetch_sub(own, Ordering::Relaxed);
    }
}

/// The bytes of the text `held` and `remembered` keep: the access and refresh tokens, the
/// scope and issuer, and every secret remembered. Only the text: the allocations around
/// it are in the pool's fixed cost per entry.
pub(super) fn weigh(held: Option<&Held>, remembered: &Remembered) -> usize {
    let held = held.map_or(0, |h| {
        h.token.expose().len()
            + h.refresh.as_ref().map_or(0, |r| r.expose().len())
            + h.scope.as_ref().map_or(0, String::len)
            + h.issuer.len()
    });
    held + remembered.bytes()
}

/// Bytes the allocator spends on each string besides its text, on average: its header
/// and the rounding up to a chunk (glibc's smallest is 32 bytes, and metadata strings
/// are short). Checked against what `brain-bench tenants` measures.
const PER_STRING: usize = 32;

/// The bytes of what `authority` keeps: the text of its resource, issuer, endpoints and
/// lists, and [`PER_STRING`] for each string.
pub(super) fn weigh_authority(a: &Authority) -> usize {
    let one = |s: &str| s.len() + PER_STRING;
    let some = |s: &Option<String>| s.as_deref().map_or(0, one);
    let list = |l: &Option<Vec<String>>| {
        l.as_ref()
            .map_or(0, |l| PER_STRING + l.iter().map(|s| one(s)).sum::<usize>())
    };
    let m = &a.server;
    one(&a.resource)
        + one(&a.issuer)
        + one(&m.issuer)
        + some(&m.authorization_endpoint)
        + some(&m.token_endpoint)
        + some(&m.registration_endpoint)
        + list(&m.token_endpoint_auth_methods_supported)
        + list(&m.code_challenge_methods_supported)
        + list(&m.scopes_supported)
        + list(&m.grant_types_supported)
        + list(&a.scopes_supported)
}
