//! A server's health: after failures in a row, attempts wait out a cooldown; an attempt
//! begun after it that fails again doubles it, up to a ceiling (attempts begun before it
//! ended count, but neither lengthen it nor end a trial); one success ends it. One mechanism for
//! the circuit breaker of an HTTP server (calls fail at once during the cooldown, then
//! one trial call goes) and for restarting a crashed child process (the next start waits
//! the cooldown out). The numbers live here, as [`Policy`]s; time is passed in.

use std::time::{Duration, Instant};

/// When health turns bad and how long it stays so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// Failures in a row before attempts wait.
    pub trip_after: u32,
    /// The first cooldown; each further failure doubles it.
    pub first: Duration,
    /// The longest cooldown.
    pub max: Duration,
}

impl Policy {
    /// An HTTP server's circuit breaker: after 5 calls in a row could not reach it, calls
    /// fail at once for 5 s, doubling up to a minute.
    pub const BREAKER: Self = Self {
        trip_after: 5,
        first: Duration::from_secs(5),
        max: Duration::from_secs(60),
    };
    /// A managed child process: after each crash the next start waits 250 ms, doubling
    /// up to 30 s.
    pub const RESTART: Self = Self {
        trip_after: 1,
        first: Duration::from_millis(250),
        max: Duration::from_secs(30),
    };
}

/// `first` doubled `times` times, at most `max`: the backoff every wait of the client
/// grows by (health here, the era probe's retries in [`super::era::Retry`]).
pub fn doubling(first: Duration, max: Duration, times: u32) -> Duration {
    first.saturating_mul(1u32 << times.min(16)).min(max)
}

/// What an attempt may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admit {
    /// Go ahead: health is good.
    Go,
    /// Go ahead as the one trial after a cooldown; report its outcome (or
    /// [`Health::abandoned`]).
    Trial,
    /// Not before `until` (a cooldown), or not while a trial is under way (`trial`).
    Wait {
        /// When the cooldown ends.
        until: Instant,
        /// A trial is under way: wait for its outcome.
        trial: bool,
    },
}

/// One server's health.
#[derive(Clone, Debug)]
pub struct Health {
    policy: Policy,
    /// Failures since the last success.
    streak: u32,
    /// Failures over the server's life.
    total: u64,
    /// When the streak turned bad (the failure that reached the policy's count).
    since: Option<Instant>,
    /// No attempt before this.
    until: Option<Instant>,
    /// The cooldown now in force.
    cooldown: Duration,
    /// A trial is under way.
    trial: bool,
}

impl Health {
    /// Good health under `policy`.
    pub fn new(policy: Policy) -> Self {
        Self {
            policy,
            streak: 0,
            total: 0,
            since: None,
            until: None,
            cooldown: Duration::ZERO,
            trial: false,
        }
    }

    /// Whether an attempt may go at `now`.
    pub fn admit(&mut self, now: Instant) -> Admit {
        let Some(until) = self.until else {
            return Admit::Go;
        };
        if self.trial || now < until {
            return Admit::Wait {
                until,
                trial: self.trial,
            };
        }
        self.trial = true;
        Admit::Trial
    }

    /// An attempt begun at `started` failed at `now`. At the policy's count the cooldown
    /// starts; the failure of an attempt begun after it ended (the trial, or a start that
    /// waited it out) doubles it and ends the trial; one begun before only counts.
    pub fn failed(&mut self, started: Instant, now: Instant) {
        self.streak = self.streak.saturating_add(1);
        self.total = self.total.saturating_add(1);
        match self.until {
            None if self.streak >= self.policy.trip_after => {
                self.since = Some(now);
                self.cooldown = self.policy.first;
                self.until = Some(now + self.cooldown);
            }
            Some(until) if started >= until => {
                self.trial = false;
                self.cooldown = doubling(self.cooldown, self.policy.max, 1);
                self.until = Some(now + self.cooldown);
            }
            _ => {}
        }
    }

    /// An attempt worked: health is good again.
    pub fn succeeded(&mut self) {
        self.streak = 0;
        self.since = None;
        self.until = None;
        self.cooldown = Duration::ZERO;
        self.trial = false;
    }

    /// An attempt begun at `started` ended with no outcome (its caller gave up): if it was
    /// the trial, another may go.
    pub fn abandoned(&mut self, started: Instant) {
        if self.until.is_some_and(|until| started >= until) {
            self.trial = false;
        }
    }

    /// Whether health is bad: attempts wait or fail at once.
    pub fn is_bad(&self) -> bool {
        self.until.is_some()
    }

    /// Failures since the last success.
    pub fn streak(&self) -> u32 {
        self.streak
    }

    /// Failures over the server's life.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// When the current bad spell began.
    pub fn since(&self) -> Option<Instant> {
        self.since
    }

    /// No attempt before this (none while health is good).
    pub fn until(&self) -> Option<Instant> {
        self.until
    }
}
