//! Health: the breaker and the restart backoff, from the outcomes and the clock alone.

use std::time::{Duration, Instant};

use crate::client::health::{Admit, Health, Policy, doubling};

fn wait(until: Instant, trial: bool) -> Admit {
    Admit::Wait { until, trial }
}

#[test]
fn the_breaker_opens_after_five_failures_and_lets_one_trial_through() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::BREAKER);
    for _ in 0..4 {
        assert_eq!(health.admit(t0), Admit::Go);
        health.failed(t0, t0);
    }
    assert!(!health.is_bad(), "four failures are not enough");
    health.failed(t0, t0);
    let until = t0 + Duration::from_secs(5);
    assert_eq!(health.admit(t0), wait(until, false));
    // The cooldown over, one trial; the others wait for it.
    assert_eq!(health.admit(until), Admit::Trial);
    assert_eq!(health.admit(until), wait(until, true));
    // The trial fails: twice as long.
    health.failed(until, until);
    let next = until + Duration::from_secs(10);
    assert_eq!(health.admit(until), wait(next, false));
    assert_eq!(health.since(), Some(t0), "bad since the fifth failure");
    // A trial abandoned frees the way for another.
    assert_eq!(health.admit(next), Admit::Trial);
    health.abandoned(next);
    assert_eq!(health.admit(next), Admit::Trial);
    // One success: good again.
    health.succeeded();
    assert_eq!(health.admit(next), Admit::Go);
    assert_eq!((health.streak(), health.total()), (0, 6));
}

#[test]
fn a_call_begun_before_the_cooldown_neither_lengthens_it_nor_ends_the_trial() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::BREAKER);
    for _ in 0..5 {
        health.failed(t0, t0);
    }
    let until = t0 + Duration::from_secs(5);
    // A straggler begun before the breaker opened fails during the cooldown, and another
    // fails after it: counted, nothing else.
    health.failed(t0, t0 + Duration::from_secs(1));
    assert_eq!(health.until(), Some(until));
    assert_eq!(health.admit(until), Admit::Trial);
    health.failed(t0, until + Duration::from_secs(1));
    assert_eq!(health.until(), Some(until), "not lengthened");
    assert_eq!(
        health.admit(until),
        wait(until, true),
        "the trial still runs"
    );
    // A straggler that gives up does not free the trial's slot either.
    health.abandoned(t0);
    assert_eq!(health.admit(until), wait(until, true));
    assert_eq!(health.total(), 7);
}

#[test]
fn cooldowns_double_up_to_the_ceiling() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::BREAKER);
    for _ in 0..5 {
        health.failed(t0, t0);
    }
    let mut waits = Vec::new();
    for _ in 0..6 {
        let at = health.until().expect("open");
        assert_eq!(health.admit(at), Admit::Trial);
        health.failed(at, at);
        waits.push((health.until().expect("open") - at).as_secs());
    }
    assert_eq!(waits, [10, 20, 40, 60, 60, 60]);
    assert_eq!(health.total(), 11);
}

#[test]
fn a_crashed_child_restarts_after_a_backoff_a_working_call_resets() {
    let t0 = Instant::now();
    let mut health = Health::new(Policy::RESTART);
    health.failed(t0, t0);
    let first = t0 + Duration::from_millis(250);
    assert_eq!(health.until(), Some(first));
    // Another child of the same moment crashing too is the same bad spell.
    health.failed(t0, t0 + Duration::from_millis(10));
    assert_eq!(health.until(), Some(first));
    // ...even when it crashes after the backoff: it began before.
    health.failed(t0, first + Duration::from_millis(5));
    assert_eq!(health.until(), Some(first));
    // The child started after the backoff crashes: twice as long.
    health.failed(first, first + Duration::from_millis(1));
    let second = first + Duration::from_millis(1) + Duration::from_millis(500);
    assert_eq!(health.until(), Some(second));
    let mut at = second;
    for _ in 0..20 {
        at = health.until().expect("waiting");
        health.failed(at, at);
    }
    assert_eq!(health.until(), Some(at + Duration::from_secs(30)));
    assert_eq!(health.total(), 24);
    health.succeeded();
    assert_eq!(health.until(), None);
    health.failed(at, at);
    assert_eq!(health.until(), Some(at + Duration::from_millis(250)));
}

#[test]
fn doubling_never_overflows() {
    let max = Duration::from_secs(30);
    let first = Duration::from_millis(250);
    assert_eq!(doubling(first, max, 0), first);
    assert_eq!(doubling(first, max, 3), Duration::from_secs(2));
    assert_eq!(doubling(first, max, u32::MAX), max);
}
