//! What an authorizer's tokens weigh, kept in its pool's running total so the pool knows
//! its bytes without visiting every authorizer (`Authorizers` evicts by it).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::held::{Held, Remembered};

/// The bytes of the secrets one authorizer holds (see [`weigh`]), added to its pool's
/// total; taken back out when the authorizer is dropped.
#[derive(Debug, Default)]
pub(crate) struct Footprint {
    own: AtomicUsize,
    total: Arc<AtomicUsize>,
}

impl Footprint {
    /// A footprint of nothing yet, counted in `total`.
    pub(crate) fn counted_in(total: Arc<AtomicUsize>) -> Self {
        Self {
            own: AtomicUsize::new(0),
            total,
        }
    }

    /// The authorizer now holds `bytes`.
    pub(super) fn set(&self, bytes: usize) {
        // Added before the old weight is taken out, so the total never dips below the
        // truth (nor underflows) while two updates race.
        self.total.fetch_add(bytes, Ordering::Relaxed);
        let old = self.own.swap(bytes, Ordering::Relaxed);
        self.total.fetch_sub(old, Ordering::Relaxed);
    }
}

impl Drop for Footprint {
    fn drop(&mut self) {
        self.total.fetch_sub(*self.own.get_mut(), Ordering::Relaxed);
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
