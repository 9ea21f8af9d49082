//! The shared path's plan, step by step.

use super::*;

const BUDGET: Duration = Duration::from_secs(40);

#[test]
fn a_fresh_token_is_used_else_the_lease_is_asked_for() {
    let now = SystemTime::now();
    let fresh = Found::Loaded {
        fresh: true,
        leased: false,
    };
    assert_eq!(plan(fresh, now, BUDGET), Next::Use);
    let stale = Found::Loaded {
        fresh: false,
        leased: false,
    };
    assert_eq!(plan(stale, now, BUDGET), Next::TakeLease);
    let leased = Found::Loaded {
        fresh: false,
        leased: true,
    };
    assert_eq!(plan(leased, now, BUDGET), Next::Renew);
    let granted = Found::Leasing {
        lease: Lease::Granted,
        waited: Duration::ZERO,
        waits: 0,
    };
    assert_eq!(
        plan(granted, now, BUDGET),
        Next::Reload,
        "the holder before may have renewed"
    );
}

#[test]
fn a_held_lease_is_waited_for_with_a_bounded_backoff() {
    let now = SystemTime::now();
    let until = now + Duration::from_secs(20);
    let held = |waits, waited| Found::Leasing {
        lease: Lease::Held { until },
        waited,
        waits,
    };
    let waits: Vec<_> = (0..8)
        .map(|n| plan(held(n, Duration::ZERO), now, BUDGET))
        .collect();
    assert_eq!(waits[0], Next::Wait(FIRST_WAIT));
    assert_eq!(waits[1], Next::Wait(FIRST_WAIT * 2));
    assert_eq!(waits[7], Next::Wait(MOST_WAIT), "the backoff is bounded");
    assert_eq!(
        plan(held(60, Duration::ZERO), now, BUDGET),
        Next::Wait(MOST_WAIT),
        "many waits do not overflow"
    );
    // Past the budget, the call gives up.
    assert_eq!(plan(held(3, BUDGET), now, BUDGET), Next::GiveUp);
}

#[test]
fn a_lease_about_to_expire_is_looked_at_just_after() {
    let now = SystemTime::now();
    let soon = Found::Leasing {
        lease: Lease::Held {
            until: now + Duration::from_millis(5),
        },
        waited: Duration::ZERO,
        waits: 9,
    };
    assert_eq!(
        plan(soon, now, BUDGET),
        Next::Wait(Duration::from_millis(5) + FIRST_WAIT)
    );
    let expired = Found::Leasing {
        lease: Lease::Held {
            until: now - Duration::from_secs(1),
        },
        waited: Duration::ZERO,
        waits: 9,
    };
    assert_eq!(plan(expired, now, BUDGET), Next::Wait(FIRST_WAIT));
}
