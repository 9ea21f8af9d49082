//! Random identifiers for sessions and calls run from the shell.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh identifier: `prefix-` and 32 hex digits.
///
/// The digits come from std's randomly keyed SipHash over the time, the process id and a
/// counter: unique in practice and unpredictable enough for correlation ids, which is all
/// these are (they are not secrets).
pub(crate) fn generate(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut halves = [0u64; 2];
    for half in &mut halves {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(n);
        *half = h.finish();
    }
    format!("{prefix}-{:016x}{:016x}", halves[0], halves[1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_distinct_and_shaped() {
        let a = super::generate("call");
        let b = super::generate("call");
        assert_ne!(a, b);
        assert_eq!(a.len(), "call-".len() + 32);
        assert!(a.starts_with("call-"));
    }
}
