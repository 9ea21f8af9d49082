//! A circuit breaker per HTTP server: after [`TRIP_AFTER`] calls in a row could not reach
//! a server (no connection, TLS failure, no answer to the era probe), calls to it fail at
//! once for a cooldown instead of each paying a connect timeout; then one trial call goes,
//! and its outcome closes the breaker or opens it again for twice as long (up to
//! [`MAX_COOLDOWN`]). Any answer from the server, even an error, counts as reached.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::observe;

/// Calls in a row that found the server unreachable before the breaker opens.
pub(crate) const TRIP_AFTER: u32 = 5;
/// The first cooldown of an open breaker.
pub(crate) const FIRST_COOLDOWN: Duration = Duration::from_secs(5);
/// The longest cooldown.
pub(crate) const MAX_COOLDOWN: Duration = Duration::from_secs(60);
/// Servers tracked at most; past it, those whose breaker is not open are forgotten.
const MAX_SERVERS: usize = 4096;

/// The breakers of a client: the servers that calls could not reach lately, by key. A
/// server that answers is not tracked at all, so while no server is failing a call costs
/// one atomic load here, no lock.
#[derive(Debug, Default)]
pub(crate) struct Breakers {
    map: Mutex<HashMap<String, State>>,
    /// How many servers `map` holds, readable without the lock.
    tracked: AtomicUsize,
}

#[derive(Debug, Default)]
struct State {
    /// Calls in a row that could not reach the server.
    failures: u32,
    open: Option<Open>,
}

#[derive(Debug)]
struct Open {
    /// When the breaker opened: the server has been unreachable since then.
    since: SystemTime,
    until: Instant,
    cooldown: Duration,
    /// A trial call is under way.
    trial: bool,
}

/// A call let through: report how it went with [`Ticket::reached`] or
/// [`Ticket::unreachable`]; a trial's ticket dropped unreported (a cancelled call) frees
/// the trial.
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    breakers: &'a Breakers,
    /// The server's key, when this call is its trial.
    trial: Option<String>,
    reported: bool,
}

impl Breakers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, State>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets a call to the server `key` (named `origin` in messages) through, or says why
    /// not: its breaker is open.
    pub(crate) fn admit(&self, key: &str, origin: &str) -> Result<Ticket<'_>, String> {
        let mut ticket = Ticket {
            breakers: self,
            trial: None,
            reported: false,
        };
        if self.tracked.load(Ordering::Acquire) == 0 {
            return Ok(ticket);
        }
        let mut map = self.lock();
        let now = Instant::now();
        if let Some(open) = map.get_mut(key).and_then(|s| s.open.as_mut()) {
            if now < open.until || open.trial {
                let wait = open
                    .until
                    .saturating_duration_since(now)
                    .as_secs_f64()
                    .ceil();
                let next = if open.trial {
                    "a trial call is under way".to_owned()
                } else {
                    format!("the next trial in {wait} s")
                };
                return Err(format!(
                    "{origin} has been unreachable since {} ({TRIP_AFTER} or more calls in a \
                     row could not reach it); calls fail at once until one trial call gets \
                     through ({next}); nothing was sent",
                    rfc3339(open.since)
                ));
            }
            open.trial = true;
            ticket.trial = Some(key.to_owned());
            observe::breaker(origin, "half_open");
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
        if map.remove(key).is_some_and(|state| state.open.is_some()) {
            observe::breaker(origin, "closed");
        }
        breakers.tracked.store(map.len(), Ordering::Release);
    }

    /// The call could not reach the server `key`.
    pub(crate) fn unreachable(mut self, key: &str, origin: &str) {
        self.reported = true;
        let breakers = self.breakers;
        let mut map = breakers.lock();
        let state = map.entry(key.to_owned()).or_default();
        state.failures = state.failures.saturating_add(1);
        let now = Instant::now();
        match state.open.as_mut() {
            Some(open) if self.trial.is_some() => {
                open.cooldown = (open.cooldown * 2).min(MAX_COOLDOWN);
                open.until = now + open.cooldown;
                open.trial = false;
                observe::breaker(origin, "open");
            }
            Some(_) => {}
            None if state.failures >= TRIP_AFTER => {
                state.open = Some(Open {
                    since: SystemTime::now(),
                    until: now + FIRST_COOLDOWN,
                    cooldown: FIRST_COOLDOWN,
                    trial: false,
                });
                observe::breaker(origin, "open");
            }
            None => {}
        }
        if map.len() > MAX_SERVERS {
            map.retain(|_, s| s.open.is_some());
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
            && let Some(open) = self
                .breakers
                .lock()
                .get_mut(key)
                .and_then(|s| s.open.as_mut())
        {
            open.trial = false;
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

    /// Ends the cooldown of the open breaker of `key` now.
    fn end_cooldown(breakers: &Breakers, key: &str) {
        breakers
            .lock()
            .get_mut(key)
            .unwrap()
            .open
            .as_mut()
            .unwrap()
            .until = Instant::now();
    }

    #[test]
    fn it_opens_after_failures_in_a_row_and_closes_on_a_reached_trial() {
        let breakers = Breakers::default();
        for _ in 0..TRIP_AFTER - 1 {
            breakers.admit("k", "o").unwrap().unreachable("k", "o");
        }
        // One answer resets the count, and the server is no longer tracked.
        breakers.admit("k", "o").unwrap().reached("k", "o");
        assert_eq!(breakers.tracked.load(Ordering::Acquire), 0);
        for _ in 0..TRIP_AFTER {
            breakers.admit("k", "o").unwrap().unreachable("k", "o");
        }
        let refused = breakers.admit("k", "o").unwrap_err();
        assert!(
            refused.contains("unreachable since") && refused.contains("nothing was sent"),
            "{refused}"
        );
        assert!(
            breakers.admit("other", "p").is_ok(),
            "breakers are per server"
        );
        // After the cooldown one trial goes; the others still fail at once.
        end_cooldown(&breakers, "k");
        let trial = breakers.admit("k", "o").unwrap();
        assert!(
            breakers
                .admit("k", "o")
                .unwrap_err()
                .contains("trial call is under way")
        );
        // A dropped trial frees the slot; a failed one doubles the cooldown.
        drop(trial);
        breakers.admit("k", "o").unwrap().unreachable("k", "o");
        let cooldown = breakers.lock()["k"].open.as_ref().unwrap().cooldown;
        assert_eq!(cooldown, FIRST_COOLDOWN * 2);
        end_cooldown(&breakers, "k");
        breakers.admit("k", "o").unwrap().reached("k", "o");
        assert!(breakers.admit("k", "o").is_ok(), "closed again");
    }

    #[test]
    fn times_read_as_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_764_892_800 + 3_661)),
            "2025-12-05T01:01:01Z"
        );
    }
}
