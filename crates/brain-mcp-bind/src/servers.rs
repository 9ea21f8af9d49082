//! Every server's state, by key: the core's [`ServerState`] (era and health) for HTTP
//! servers and managed children alike, kept for the life of a client. The core decides
//! what an outcome does; this table only keeps the states, reports health changes, and
//! lets HTTP calls through the breaker with a [`Ticket`].
//!
//! While no server of its kind is failing, a call that reached its server records nothing
//! and its admission costs one atomic load: a lock is taken only for the era lookup. A
//! child's health never slows HTTP calls down, nor an HTTP server's a child's. Telemetry
//! is written after the lock is let go.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime};

use brain_mcp_proto::client::health::Admit;
use brain_mcp_proto::client::{Effect, Era, Outcome, ServerKind, ServerState};

use crate::breaker::BreakerOpen;
use crate::observe;

/// Servers tracked at most. Past it, HTTP servers whose breaker is closed are forgotten
/// (their era is probed again at their next call); if the open ones still fill half the
/// table, they go too (their calls are let through again: memory stays bounded, at the
/// price of breakers a flood of failing URLs can flush). Managed children stay while their
/// server lives (the application adds them, a server cannot). So a pass over the table
/// comes at most once per `MAX_SERVERS / 2` new servers, while children fill less than
/// half of it.
const MAX_SERVERS: usize = 4096;

/// The servers of a client.
#[derive(Default)]
pub(crate) struct Servers {
    map: Mutex<HashMap<String, ServerState>>,
    /// HTTP servers with failures since their last success, readable without the lock.
    failing: AtomicUsize,
    /// Children with crashes since their server's last success, likewise.
    crashed: AtomicUsize,
}

impl std::fmt::Debug for Servers {
    /// How many servers it knows, never their keys (an HTTP server's key is its URL,
    /// whose query may hold a key).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known = self.lock().len();
        let failing = self.failing.load(Ordering::Relaxed);
        write!(f, "Servers({known} known, {failing} failing)")
    }
}

/// An attempt on a server let through: report how it went with [`Ticket::record`]; a
/// trial's ticket dropped unreported (a cancelled call) frees the trial. Its `Debug` names
/// the server by origin (the key of an HTTP server is its URL, whose query may hold a key).
pub(crate) struct Ticket<'a> {
    servers: &'a Servers,
    key: &'a str,
    kind: ServerKind,
    origin: &'a str,
    /// This attempt is the server's trial after a cooldown.
    trial: bool,
    /// When the attempt was let through: one begun before a cooldown ended neither
    /// lengthens it nor ends its trial.
    started: Instant,
    reported: bool,
}

impl std::fmt::Debug for Ticket<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket")
            .field("origin", &self.origin)
            .field("kind", &self.kind)
            .field("trial", &self.trial)
            .finish_non_exhaustive()
    }
}

impl Servers {
    /// Servers of `kind` that failed since their last success.
    fn counter(&self, kind: ServerKind) -> &AtomicUsize {
        match kind {
            ServerKind::Process => &self.crashed,
            _ => &self.failing,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, ServerState>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The known era of the server `key`.
    pub(crate) fn era(&self, key: &str) -> Option<Era> {
        self.lock().get(key).and_then(ServerState::era)
    }

    /// Remembers the era of the server `key` (of `kind`, if it is new).
    pub(crate) fn learned(&self, key: &str, kind: ServerKind, era: Era) {
        self.with(key, kind, |state| state.learned(era));
    }

    /// Runs `f` on the state of `key`, made for a server of `kind` if there is none.
    fn with<T>(&self, key: &str, kind: ServerKind, f: impl FnOnce(&mut ServerState) -> T) -> T {
        let mut map = self.lock();
        if !map.contains_key(key) {
            if map.len() >= MAX_SERVERS {
                map.retain(|_, s| s.kind() == ServerKind::Process || s.is_bad());
                if map.len() >= MAX_SERVERS / 2 {
                    map.retain(|_, s| s.kind() == ServerKind::Process);
                }
                for kind in [ServerKind::Http, ServerKind::Process] {
                    let count = map
                        .values()
                        .filter(|s| s.kind() == kind && failing(s))
                        .count();
                    self.counter(kind).store(count, Ordering::Release);
                }
            }
            map.insert(key.to_owned(), ServerState::new(kind));
        }
        // Inserted above when missing; were it not, a state of its own decides alone.
        let Some(state) = map.get_mut(key) else {
            return f(&mut ServerState::new(kind));
        };
        let before = failing(state);
        let out = f(state);
        let counter = self.counter(state.kind());
        match (before, failing(state)) {
            (false, true) => counter.fetch_add(1, Ordering::AcqRel),
            (true, false) => counter.fetch_sub(1, Ordering::AcqRel),
            _ => 0,
        };
        out
    }

    /// Forgets the server `key` (a managed server that is gone).
    pub(crate) fn forget(&self, key: &str) {
        let mut map = self.lock();
        if let Some(state) = map.remove(key).filter(failing) {
            self.counter(state.kind()).fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Records `outcome` of an attempt on the server `key` (of `kind`) begun at
    /// `started`, and says what the core decided. Health changes of an HTTP server are
    /// reported as its breaker's.
    pub(crate) fn record(
        &self,
        key: &str,
        kind: ServerKind,
        origin: &str,
        outcome: Outcome,
        started: Instant,
    ) -> Effect {
        // The common cases touch nothing, as the core says: while no server of its kind
        // is failing, this one is not either.
        let healthy = self.counter(kind).load(Ordering::Acquire) == 0;
        if outcome.changes_nothing(kind, healthy) {
            return Effect::Nothing;
        }
        let (effect, was_bad, is_bad) = self.with(key, kind, |s| {
            let was_bad = s.is_bad();
            let effect = s.record(outcome, started, Instant::now());
            (effect, was_bad, s.is_bad())
        });
        if kind == ServerKind::Http {
            if matches!(effect, Effect::Cooling { .. }) {
                observe::breaker(origin, "open");
            } else if was_bad && !is_bad {
                observe::breaker(origin, "closed");
            }
        }
        effect
    }

    /// When a child of the server `key` may start next (`None`: at once), and its
    /// failures so far.
    pub(crate) fn start_after(&self, key: &str) -> (Option<Instant>, u64) {
        self.lock()
            .get(key)
            .map_or((None, 0), |s| (s.start_after(), s.health().total()))
    }

    /// An attempt on the server `key` (of `kind`, named `origin` in messages) that is
    /// never refused, only counted (a listing).
    pub(crate) fn ticket<'a>(
        &'a self,
        key: &'a str,
        kind: ServerKind,
        origin: &'a str,
    ) -> Ticket<'a> {
        Ticket {
            servers: self,
            key,
            kind,
            origin,
            trial: false,
            started: Instant::now(),
            reported: false,
        }
    }

    /// Lets an exchange with the server `key` through, or says why not: its state in the
    /// core refuses it (an HTTP server's breaker is open).
    pub(crate) fn admit<'a>(
        &'a self,
        key: &'a str,
        kind: ServerKind,
        origin: &'a str,
    ) -> Result<Ticket<'a>, BreakerOpen> {
        self.admit_at(key, kind, origin, Instant::now())
    }

    fn admit_at<'a>(
        &'a self,
        key: &'a str,
        kind: ServerKind,
        origin: &'a str,
        now: Instant,
    ) -> Result<Ticket<'a>, BreakerOpen> {
        let mut ticket = self.ticket(key, kind, origin);
        ticket.started = now;
        // Only an HTTP server's health refuses exchanges.
        if kind == ServerKind::Process || self.failing.load(Ordering::Acquire) == 0 {
            return Ok(ticket);
        }
        let admit = {
            let mut map = self.lock();
            let Some(state) = map.get_mut(key) else {
                return Ok(ticket);
            };
            (state.admit(now), state.health().since())
        };
        match admit {
            (Admit::Trial, _) => {
                ticket.trial = true;
                observe::breaker(origin, "half_open");
            }
            (Admit::Wait { until, trial }, since) => {
                // The wall-clock time the server turned unreachable, for the message.
                let since = since.unwrap_or(now);
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
    /// The attempt ended as `outcome` (an error's [`crate::driver::DriverError::outcome`],
    /// or [`Outcome::Worked`]); says what the core decided.
    pub(crate) fn record(mut self, outcome: Outcome) -> Effect {
        self.reported = true;
        let (key, kind, origin) = (self.key, self.kind, self.origin);
        self.servers
            .record(key, kind, origin, outcome, self.started)
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.reported || !self.trial {
            return;
        }
        if let Some(state) = self.servers.lock().get_mut(self.key) {
            state.record(Outcome::Abandoned, self.started, Instant::now());
        }
    }
}

/// Whether a server has failed since its last success.
fn failing(state: &ServerState) -> bool {
    state.health().streak() > 0
}

#[cfg(test)]
mod tests {
    use brain_mcp_proto::client::health::Policy;

    use super::*;

    const HTTP: ServerKind = ServerKind::Http;

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_and_closes_on_a_reached_trial() {
        let servers = Servers::default();
        let trip = Policy::BREAKER.trip_after;
        for _ in 0..trip - 1 {
            servers
                .admit("k", HTTP, "o")
                .unwrap()
                .record(Outcome::Unreachable);
        }
        // One answer resets the count.
        servers
            .admit("k", HTTP, "o")
            .unwrap()
            .record(Outcome::Answered);
        assert_eq!(servers.failing.load(Ordering::Acquire), 0);
        let t0 = Instant::now();
        for _ in 0..trip {
            servers
                .admit_at("k", HTTP, "o", t0)
                .unwrap()
                .record(Outcome::Unreachable);
        }
        let refused = servers
            .admit_at("k", HTTP, "o", t0)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("unreachable since") && refused.contains("nothing was sent"),
            "{refused}"
        );
        assert!(
            servers.admit("other", HTTP, "p").is_ok(),
            "breakers are per server"
        );
        let until = servers.lock()["k"].health().until().unwrap();
        // After the cooldown one trial goes; the others still fail at once.
        let trial = servers.admit_at("k", HTTP, "o", until).unwrap();
        assert!(
            servers
                .admit_at("k", HTTP, "o", until)
                .unwrap_err()
                .to_string()
                .contains("trial call is under way")
        );
        // A dropped trial frees the slot; an answered one closes the breaker.
        drop(trial);
        let trial = servers.admit_at("k", HTTP, "o", until).unwrap();
        assert_eq!(trial.record(Outcome::Answered), Effect::Recovered);
        assert!(servers.admit("k", HTTP, "o").is_ok(), "closed again");
        assert_eq!(servers.failing.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_trial_answered_with_a_stale_era_closes_the_breaker() {
        let servers = Servers::default();
        servers.learned("k", HTTP, Era::Handshake);
        let t0 = Instant::now();
        for _ in 0..Policy::BREAKER.trip_after {
            servers
                .admit_at("k", HTTP, "o", t0)
                .unwrap()
                .record(Outcome::Unreachable);
        }
        let until = servers.lock()["k"].health().until().unwrap();
        let trial = servers.admit_at("k", HTTP, "o", until).unwrap();
        assert_eq!(trial.record(Outcome::Stale), Effect::Reprobe);
        assert!(
            servers.admit("k", HTTP, "o").is_ok(),
            "closed by the answer"
        );
        assert_eq!(servers.failing.load(Ordering::Acquire), 0);
        assert_eq!(servers.era("k"), None);
    }

    #[test]
    fn debug_shows_counts_never_a_server() {
        let servers = Servers::default();
        servers.learned("https://h.example/mcp?key=k-123", HTTP, Era::Handshake);
        let shown = format!("{servers:?}");
        assert_eq!(shown, "Servers(1 known, 0 failing)");
    }

    #[test]
    fn a_crashed_child_leaves_http_calls_on_the_fast_path() {
        let servers = Servers::default();
        let now = Instant::now();
        servers.record("child", ServerKind::Process, "stdio:c", Outcome::Ended, now);
        assert_eq!(servers.failing.load(Ordering::Acquire), 0);
        assert_eq!(servers.crashed.load(Ordering::Acquire), 1);
        assert_eq!(servers.start_after("child").1, 1);
        // A call that worked on it resets its backoff.
        servers.record(
            "child",
            ServerKind::Process,
            "stdio:c",
            Outcome::Worked,
            now,
        );
        assert_eq!(servers.start_after("child").0, None);
        assert_eq!(servers.crashed.load(Ordering::Acquire), 0);
        // A ticket names its server by origin, never by key.
        let ticket = servers.ticket("https://h.example/mcp?key=k-123", HTTP, "https://h.example");
        let shown = format!("{ticket:?}");
        assert!(
            shown.contains("https://h.example") && !shown.contains("k-123"),
            "{shown}"
        );
    }

    #[test]
    fn an_era_is_kept_per_server_and_a_stale_one_forgotten() {
        let servers = Servers::default();
        servers.learned("a", HTTP, Era::Handshake);
        assert_eq!(servers.era("a"), Some(Era::Handshake));
        assert_eq!(servers.era("b"), None);
        let now = Instant::now();
        assert_eq!(
            servers.record("a", HTTP, "o", Outcome::Stale, now),
            Effect::Reprobe
        );
        assert_eq!(servers.era("a"), None);
    }

    #[test]
    fn the_table_stays_bounded_whatever_servers_fail() {
        let servers = Servers::default();
        servers.learned("child", ServerKind::Process, Era::Handshake);
        let now = Instant::now();
        // A server that failed once but never tripped is forgotten like a healthy one;
        // an open breaker stays while there is room.
        servers.record("once", HTTP, "o", Outcome::Unreachable, now);
        for _ in 0..Policy::BREAKER.trip_after {
            servers.record("down", HTTP, "o", Outcome::Unreachable, now);
        }
        for i in 0..MAX_SERVERS {
            servers.learned(&format!("s{i}"), HTTP, Era::Handshake);
        }
        {
            let map = servers.lock();
            assert!(map.len() <= MAX_SERVERS);
            assert!(map.contains_key("child") && map.contains_key("down"));
            assert!(!map.contains_key("once"));
        }
        assert_eq!(servers.failing.load(Ordering::Acquire), 1);
        // Open breakers alone filling the table go too.
        for i in 0..2 * MAX_SERVERS {
            let key = format!("d{i}");
            for _ in 0..Policy::BREAKER.trip_after {
                servers.record(&key, HTTP, "o", Outcome::Unreachable, now);
            }
        }
        let map = servers.lock();
        assert!(map.len() <= MAX_SERVERS, "{}", map.len());
        assert!(map.contains_key("child"));
        let failing = map
            .values()
            .filter(|s| s.kind() == HTTP && failing(s))
            .count();
        assert_eq!(servers.failing.load(Ordering::Acquire), failing);
    }
}
