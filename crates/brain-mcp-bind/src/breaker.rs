//! A circuit breaker per HTTP server, on the core's [`Health`] (its numbers are
//! [`Policy::BREAKER`]): after calls in a row could not reach a server (no connection,
//! TLS failure, no answer to the era probe), calls to it fail at once for a cooldown
//! instead of each paying a connect timeout; then one trial call goes, and its outcome
//! closes the breaker or opens it again for twice as long. Any answer from the server,
//! even an error, counts as reached.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use brain_mcp_proto::client::health::{Admit, Health, Policy};

use crate::observe;

/// Servers tracked at most; past it, those whose breaker is not open are forgotten.
const MAX_SERVERS: usize = 4096;

/// The breakers of a client: the servers that calls could not reach lately, by key. A
/// server that answers is not tracked at all, so while no server is failing a call costs
/// one atomic load here, no lock.
#[derive(Debug, Default)]
pub(crate) struct Breakers {
    map: Mutex<HashMap<String, Health>>,
    /// How many servers `map` holds, readable without the lock.
    tracked: AtomicUsize,
}

/// Why a call fails at once: its server's breaker is open. `Display` says since when the
/// server has been unreachable and when a call may go again; nothing was sent.
#[derive(Debug)]
pub(crate) struct BreakerOpen {
    /// What messages call the server.
    origin: String,
    /// When it turned unreachable.
    since: SystemTime,
    /// The wait until the next trial; none while a trial is under way.
    next: Option<std::time::Duration>,
}

impl std::fmt::Display for BreakerOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let next = match self.next {
            Some(wait) => format!("the next trial in {} s", wait.as_secs_f64().ceil()),
            None => "a trial call is under way".to_owned(),
        };
        write!(
            f,
            "{} has been unreachable since {} ({} or more calls in a row could not reach \
             it); calls fail at once until one trial call gets through ({next}); nothing \
             was sent",
            self.origin,
            rfc3339(self.since),
            Policy::BREAKER.trip_after
        )
    }
}

/// A call let through: report how it went with [`Ticket::reached`] or
/// [`Ticket::unreachable`]; a trial's ticket dropped unreported (a cancelled call) frees
/// the trial.
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    breakers: &'a Breakers,
    /// The server's key, when this call is its trial.
    trial: Option<String>,
    /// When the call was let through: a call begun before a cooldown ended neither
    /// lengthens it nor ends its trial.
    started: Instant,
    reported: bool,
}

impl Breakers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Health>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets a call to the server `key` (named `origin` in messages) through, or says why
    /// not: its breaker is open.
    pub(crate) fn admit(&self, key: &str, origin: &str) -> Result<Ticket<'_>, BreakerOpen> {
        self.admit_at(key, origin, Instant::now())
    }

    fn admit_at(&self, key: &str, origin: &str, now: Instant) -> Result<Ticket<'_>, BreakerOpen> {
        let mut ticket = Ticket {
            breakers: self,
            trial: None,
            started: now,
            reported: false,
        };
        if self.tracked.load(Ordering::Acquire) == 0 {
            return Ok(ticket);
        }
        let mut map = self.lock();
        let Some(health) = map.get_mut(key) else {
            return Ok(ticket);
        };
        match health.admit(now) {
            Admit::Go => {}
            Admit::Trial => {
                ticket.trial = Some(key.to_owned());
                observe::breaker(origin, "half_open");
            }
            Admit::Wait { until, trial } => {
                // The wall-clock time the server turned unreachable, for the message.
                let since = health.since().unwrap_or(now);
                return Err(BreakerOpen {
                    origin: origin.to_owned(),
                    since: SystemTime::now() - now.saturating_duration_since(since),
                    next: (!trial).then(|| until.saturating_duration_since(now)),
                });
            }
            _ => {}
        }
        Ok(ticket)
    }
}

impl Ticket<'_> {
    /// The call reached the server `key` (whatever it answered): it is no longer tracked.
    pub(crate) fn reached(mut self, key: &str, origin: &str) {
        self.reported = true;
        let breakers = self.breakers;
        if breakers.tracked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut map = breakers.lock();
        if map.remove(key).is_some_and(|health| health.is_bad()) {
            observe::breaker(origin, "closed");
        }
        breakers.tracked.store(map.len(), Ordering::Release);
    }

    /// The call could not reach the server `key`.
    pub(crate) fn unreachable(self, key: &str, origin: &str) {
        self.unreachable_at(key, origin, Instant::now());
    }

    fn unreachable_at(mut self, key: &str, origin: &str, now: Instant) {
        self.reported = true;
        let breakers = self.breakers;
        let mut map = breakers.lock();
        let health = map
            .entry(key.to_owned())
            .or_insert_with(|| Health::new(Policy::BREAKER));
        let before = health.until();
        health.failed(self.started, now);
        if health.until() != before {
            observe::breaker(origin, "open");
        }
        if map.len() > MAX_SERVERS {
            map.retain(|_, health| health.is_bad());
        }
        breakers.tracked.store(map.len(), Ordering::Release);
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.reported {
            return;
        }
        if let Some(key) = &self.trial
            && let Some(health) = self.breakers.lock().get_mut(key)
        {
            health.abandoned(self.started);
        }
    }
}

/// `since` as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(since: SystemTime) -> String {
    let secs = since.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_opens_after_failures_in_a_row_and_closes_on_a_reached_trial() {
        let breakers = Breakers::default();
        let trip = Policy::BREAKER.trip_after;
        for _ in 0..trip - 1 {
            breakers.admit("k", "o").unwrap().unreachable("k", "o");
        }
        // One answer resets the count, and the server is no longer tracked.
        breakers.admit("k", "o").unwrap().reached("k", "o");
        assert_eq!(breakers.tracked.load(Ordering::Acquire), 0);
        let t0 = Instant::now();
        for _ in 0..trip {
            breakers
                .admit_at("k", "o", t0)
                .unwrap()
                .unreachable_at("k", "o", t0);
        }
        let refused = breakers.admit_at("k", "o", t0).unwrap_err().to_string();
        assert!(
            refused.contains("unreachable since")
                && refused.contains("the next trial in 5 s")
                && refused.contains("nothing was sent"),
            "{refused}"
        );
        assert!(
            breakers.admit("other", "p").is_ok(),
            "breakers are per server"
        );
        // After the cooldown one trial goes; the others still fail at once.
        let after = t0 + Policy::BREAKER.first;
        let trial = breakers.admit_at("k", "o", after).unwrap();
        assert!(
            breakers
                .admit_at("k", "o", after)
                .unwrap_err()
                .to_string()
                .contains("trial call is under way")
        );
        // A dropped trial frees the slot; a failed one doubles the cooldown.
        drop(trial);
        breakers
            .admit_at("k", "o", after)
            .unwrap()
            .unreachable_at("k", "o", after);
        let until = breakers.lock()["k"].until().unwrap();
        assert_eq!(until - after, Policy::BREAKER.first * 2);
        breakers
            .admit_at("k", "o", until)
            .unwrap()
            .reached("k", "o");
        assert!(breakers.admit("k", "o").is_ok(), "closed again");
        assert_eq!(breakers.tracked.load(Ordering::Acquire), 0);
    }

    #[test]
    fn times_read_as_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(1_764_892_800 + 3_661)),
            "2025-12-05T01:01:01Z"
        );
    }
}
