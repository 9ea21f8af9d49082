//! Health: the breaker and the restart backoff, from the outcomes and the clock alone.

use std::time::{Duration, Instant};

use crate::client::health::{Admit, Health, Policy, doubling};

#[test]
fn the_breaker_opens_after_five_failures_and_lets_one_trial_through() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::BREAKER);
    for _ in 0..4 {
        assert_eq!(health.admit(t0), Admit::Go);
        health.failed(t0);
    }
    assert!(!health.is_bad(), "four failures are not enough");
    health.failed(t0);
    let until = t0 + Duration::from_secs(5);
    assert_eq!(
        health.admit(t0),
        Admit::Wait {
            until,
            trial: false
        }
    );
    // The cooldown over, one trial; the others wait for it.
    assert_eq!(health.admit(until), Admit::Trial);
    assert_eq!(health.admit(until), Admit::Wait { until, trial: true });
    // The trial fails: twice as long.
    health.failed(until);
    let next = until + Duration::from_secs(10);
    assert_eq!(
        health.admit(until),
        Admit::Wait {
            until: next,
            trial: false
        }
    );
    assert_eq!(health.since(), Some(t0), "bad since the fifth failure");
    // A trial abandoned frees the way for another.
    assert_eq!(health.admit(next), Admit::Trial);
    health.abandoned();
    assert_eq!(health.admit(next), Admit::Trial);
    // One success: good again.
    health.succeeded();
    assert_eq!(health.admit(next), Admit::Go);
    assert_eq!((health.streak(), health.total()), (0, 6));
}

#[test]
fn cooldowns_double_up_to_the_ceiling_and_late_failures_only_count() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::BREAKER);
    for _ in 0..5 {
        health.failed(t0);
    }
    // Calls admitted before the breaker opened fail later: counted, no longer cooldown.
    health.failed(t0 + Duration::from_secs(1));
    assert_eq!(health.until(), Some(t0 + Duration::from_secs(5)));
    let mut at = t0;
    let mut waits = Vec::new();
    for _ in 0..6 {
        at = health.until().expect("open");
        assert_eq!(health.admit(at), Admit::Trial);
        health.failed(at);
        waits.push((health.until().expect("open") - at).as_secs());
    }
    assert_eq!(waits, [10, 20, 40, 60, 60, 60]);
    assert_eq!(health.total(), 12);
    assert!(at > t0);
}

#[test]
fn a_crashed_child_restarts_after_a_backoff_a_working_call_resets() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::RESTART);
    health.failed(t0);
    let first = t0 + Duration::from_millis(250);
    assert_eq!(health.until(), Some(first));
    // Another child of the same moment crashing too is the same bad spell.
    health.failed(t0 + Duration::from_millis(10));
    assert_eq!(health.until(), Some(first));
    // The child started after the backoff crashes: twice as long.
    health.failed(first);
    assert_eq!(health.until(), Some(first + Duration::from_millis(500)));
    let mut at = first;
    for _ in 0..20 {
        at = health.until().expect("waiting");
        health.failed(at);
    }
    assert_eq!(health.until(), Some(at + Duration::from_secs(30)));
    assert_eq!(health.total(), 23);
    health.succeeded();
    assert_eq!(health.until(), None);
    health.failed(at);
    assert_eq!(health.until(), Some(at + Duration::from_millis(250)));
}

#[test]
fn doubling_never_overflows() {
    let max = Duration::from_secs(30);
    assert_eq!(
        doubling(Duration::from_millis(250), max, 0),
        Duration::from_millis(250)
    );
    assert_eq!(
        doubling(Duration::from_millis(250), max, 3),
        Duration::from_secs(2)
    );
    assert_eq!(doubling(Duration::from_millis(250), max, u32::MAX), max);
}
