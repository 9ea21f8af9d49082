//! The lifetime decisions, at instants picked by the tests.
use super::*;

fn at(base: Instant, secs: u64) -> Instant {
    base + Duration::from_secs(secs)
}

#[test]
fn fresh_until_the_margin_usable_until_expiry() {
    let t0 = Instant::now();
    let five_minutes = Lifetime::granted(t0, Some(300));
    assert_eq!(five_minutes.margin(), Some(Duration::from_secs(30)));
    assert!(five_minutes.fresh(at(t0, 269)));
    assert!(
        !five_minutes.fresh(at(t0, 270)),
        "inside the margin: renew first"
    );
    assert!(five_minutes.usable(at(t0, 299)), "cleanup still carries it");
    assert!(!five_minutes.usable(at(t0, 300)), "expired");
    let short = Lifetime::granted(t0, Some(8));
    assert_eq!(short.margin(), Some(Duration::from_secs(2)));
}

#[test]
fn no_lifetime_or_an_absurd_one_never_expires_until_refused() {
    let t0 = Instant::now();
    for seconds in [None, Some(u64::MAX), Some(MAX_LIFETIME.as_secs() + 1)] {
        let mut life = Lifetime::granted(t0, seconds);
        assert_eq!(life.expires_at(), None, "{seconds:?}");
        assert!(life.fresh(at(t0, 10_000_000)) && life.usable(at(t0, 10_000_000)));
        life.refuse();
        assert!(
            !life.fresh(t0) && !life.usable(t0),
            "a refused token is never resent"
        );
    }
}

#[test]
fn a_kept_token_counts_from_when_it_is_seen() {
    let t0 = Instant::now();
    let kept = Lifetime::kept(t0, Some(Duration::from_secs(100)));
    assert!(kept.fresh(at(t0, 74)) && !kept.fresh(at(t0, 75)));
    assert!(kept.usable(at(t0, 99)) && !kept.usable(at(t0, 100)));
    let expired = Lifetime::kept(t0, Some(Duration::ZERO));
    assert!(!expired.fresh(t0) && !expired.usable(t0));
}
