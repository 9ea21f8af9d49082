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

#[test]
fn a_failure_is_held_for_ten_seconds_and_a_success_clears_it() {
    let t0 = Instant::now();
    let mut hold = FailureHold::default();
    assert_eq!(hold.held(t0), None);
    hold.note(t0, Some("the token endpoint answered 400".to_owned()));
    assert_eq!(
        hold.held(at(t0, 9)).map(String::as_str),
        Some("the token endpoint answered 400")
    );
    assert_eq!(hold.held(at(t0, 10)), None, "released after FAILURE_HOLD");
    hold.note(at(t0, 1), None);
    assert_eq!(hold.held(at(t0, 2)), None);
}

#[test]
fn refresh_tokens_stay_with_their_issuer_and_refused_tokens_stay_refused() {
    assert!(refresh_goes_to("https://as.example", "https://as.example"));
    assert!(!refresh_goes_to(
        "https://as.example",
        "https://as.example/"
    ));
    assert!(!refresh_goes_to(
        "https://as.example",
        "https://evil.example"
    ));
    assert!(usable_after_refusal(None, "tok-a"));
    assert!(usable_after_refusal(Some("tok-a"), "tok-b"));
    assert!(!usable_after_refusal(Some("tok-a"), "tok-a"));
    let mut life = Lifetime::granted(Instant::now(), Some(60));
    assert!(!life.is_refused());
    life.refuse();
    assert!(life.is_refused());
}
