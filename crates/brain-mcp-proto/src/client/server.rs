//! A server's life, beside a call's (quinn keeps an endpoint beside its connections): the
//! era it speaks, where its exchanges run, its health, and what each outcome of an
//! attempt does to all three. One [`ServerState`] per server, whatever carries it; the
//! driver keeps it, passes the clock in, and does what it says. Drivers ask here instead
//! of branching on the era or on the kind of server themselves.

use std::time::Instant;

use super::era::Era;
use super::framing::Framing;
use super::health::{Admit, Health, Policy};

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerKind {
    /// Over HTTP.
    Http,
    /// As a child process the host runs, over its stdin and stdout.
    Process,
}

/// Where a server's exchanges (a call, a listing) run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sessions {
    /// Each exchange opens a session of its own and ends it (`DELETE`): the handshake era
    /// over HTTP.
    PerExchange,
    /// Each exchange takes a child whose session is already open, from a pool kept ready
    /// in the background, and the child ends with it: the handshake era over child
    /// processes, where a session is a process.
    PooledChild,
    /// Every exchange shares the server: self-describing requests over HTTP, one child
    /// that every call shares (the 2026 era).
    Shared,
}

impl Framing {
    /// Where the exchanges of this framing's era run on a server of `kind`.
    pub fn sessions(&self, kind: ServerKind) -> Sessions {
        match (self, kind) {
            (Self::Handshake { .. }, ServerKind::Http) => Sessions::PerExchange,
            (Self::Handshake { .. }, ServerKind::Process) => Sessions::PooledChild,
            (Self::Stateless(_), _) => Sessions::Shared,
        }
    }
}

/// How an attempt on a server ended, as the driver saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It worked.
    Worked,
    /// It failed after the server answered (an error status, a JSON-RPC error, a reply
    /// that was no answer): the server is there.
    Answered,
    /// It failed before the server was reached: no connection, no TLS, no answer to the
    /// era probe. Nothing was acted on.
    Unreachable,
    /// The server itself ended on its own (a child that exited unasked), or could not
    /// be started.
    Ended,
    /// The server no longer speaks the era it was known to (it refused the version, or
    /// its session vanished with the version): the next attempt probes again.
    Stale,
    /// The caller gave up before any outcome (a cancelled call).
    Abandoned,
}

impl Outcome {
    /// Whether recording this outcome changes nothing for a server of `kind` that has
    /// not failed since its last success (`healthy`), so a driver may skip it: an answer
    /// from a healthy server, a call that worked on a healthy child, and a call that
    /// failed on a running child (a child's health is its life).
    pub fn changes_nothing(self, kind: ServerKind, healthy: bool) -> bool {
        match (kind, self) {
            (ServerKind::Process, Self::Answered) => true,
            (ServerKind::Http, Self::Worked | Self::Answered) | (_, Self::Worked) => healthy,
            _ => false,
        }
    }
}

/// What the driver must do after an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Effect {
    /// Nothing.
    Nothing,
    /// Health turned bad, or its cooldown grew: no attempt (HTTP) or no start (a child)
    /// before `until`.
    Cooling {
        /// When the cooldown ends.
        until: Instant,
    },
    /// Health is good again after a bad spell.
    Recovered,
    /// What should be running ended: start it again, not before `after` (a child's
    /// restart backoff), where the era's exchanges run (`sessions`: refill the pool of
    /// handshake-era children, or restart the one shared child).
    Restart {
        /// The earliest start.
        after: Option<Instant>,
        /// Where the era's exchanges run.
        sessions: Sessions,
    },
    /// The era was forgotten: the next attempt probes.
    Reprobe,
}

/// One server's state: its era (known, or `None` until a probe says), and its health
/// under the policy its kind gets ([`Policy::BREAKER`] over HTTP, [`Policy::RESTART`] for
/// a child). Health gates different things by kind: over HTTP each exchange (a server
/// that calls could not reach fails them at once for a cooldown, then lets one trial
/// through); for a child only starts (exchanges on a running child always go; a start
/// after a crash waits the cooldown out).
#[derive(Clone, Debug)]
pub struct ServerState {
    kind: ServerKind,
    era: Option<Era>,
    health: Health,
}

impl ServerState {
    /// A server of `kind` whose era is not known yet, in good health.
    pub fn new(kind: ServerKind) -> Self {
        let policy = match kind {
            ServerKind::Http => Policy::BREAKER,
            ServerKind::Process => Policy::RESTART,
        };
        Self {
            kind,
            era: None,
            health: Health::new(policy),
        }
    }

    /// How the server is reached.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The era, once known.
    pub fn era(&self) -> Option<Era> {
        self.era
    }

    /// The era a probe learned, or an operator set.
    pub fn learned(&mut self, era: Era) {
        self.era = Some(era);
    }

    /// Where the exchanges of the known era run; `None` before a probe.
    pub fn sessions(&self) -> Option<Sessions> {
        self.era
            .map(|era| Framing::for_era(era).sessions(self.kind))
    }

    /// Whether an exchange may go at `now`. Over HTTP it is the breaker's answer (report
    /// the outcome of a [`Admit::Trial`], or [`Outcome::Abandoned`]); a child's exchanges
    /// always go.
    pub fn admit(&mut self, now: Instant) -> Admit {
        match self.kind {
            ServerKind::Http => self.health.admit(now),
            ServerKind::Process => Admit::Go,
        }
    }

    /// The earliest a new child may start after crashes (`None`: at once). Over HTTP,
    /// where there is nothing to start, always `None`.
    pub fn start_after(&self) -> Option<Instant> {
        match self.kind {
            ServerKind::Http => None,
            ServerKind::Process => self.health.until(),
        }
    }

    /// An attempt begun at `started` ended at `now` as `outcome`; says what to do.
    ///
    /// - Over HTTP any answer is health (even an error: the server is there); only an
    ///   unreachable server counts toward the breaker.
    /// - For a child, its health is its life: a call that failed on a running child
    ///   counts nothing (its end, if it ended, is reported as [`Outcome::Ended`] by
    ///   whoever saw it end); an end counts toward the restart backoff and restarts what
    ///   the era keeps running.
    /// - A stale era is forgotten whatever the kind; over HTTP it is an answer too, so it
    ///   heals the server (it may be the breaker's trial, whose outcome must end it).
    pub fn record(&mut self, outcome: Outcome, started: Instant, now: Instant) -> Effect {
        match (self.kind, outcome) {
            (_, Outcome::Worked) | (ServerKind::Http, Outcome::Answered) => {
                let was_bad = self.health.is_bad();
                self.health.succeeded();
                if was_bad {
                    Effect::Recovered
                } else {
                    Effect::Nothing
                }
            }
            (ServerKind::Http, Outcome::Unreachable | Outcome::Ended) => self.fail(started, now),
            (ServerKind::Process, Outcome::Ended | Outcome::Unreachable) => {
                let cooling = self.fail(started, now);
                match self.sessions() {
                    Some(sessions) => Effect::Restart {
                        after: self.health.until().filter(|until| *until > now),
                        sessions,
                    },
                    None => cooling,
                }
            }
            (ServerKind::Process, Outcome::Answered) => Effect::Nothing,
            (kind, Outcome::Stale) => {
                self.era = None;
                if kind == ServerKind::Http {
                    self.health.succeeded();
                }
                Effect::Reprobe
            }
            (_, Outcome::Abandoned) => {
                self.health.abandoned(started);
                Effect::Nothing
            }
        }
    }

    fn fail(&mut self, started: Instant, now: Instant) -> Effect {
        let before = self.health.until();
        self.health.failed(started, now);
        match self.health.until() {
            Some(until) if Some(until) != before => Effect::Cooling { until },
            _ => Effect::Nothing,
        }
    }

    /// Whether health is bad (a cooldown in force).
    pub fn is_bad(&self) -> bool {
        self.health.is_bad()
    }

    /// The server's health, read-only (failures, since when, until when).
    pub fn health(&self) -> &Health {
        &self.health
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::ProtocolVersion;
    use std::time::Duration;

    const V2026: Era = Era::Stateless(ProtocolVersion::V2026_07_28);

    #[test]
    fn an_http_server_trips_on_unreachable_attempts_and_an_answer_closes_it() {
        let mut s = ServerState::new(ServerKind::Http);
        let t0 = Instant::now();
        for _ in 1..Policy::BREAKER.trip_after {
            assert_eq!(s.record(Outcome::Unreachable, t0, t0), Effect::Nothing);
        }
        // An error answer is health: the count starts again.
        assert_eq!(s.record(Outcome::Answered, t0, t0), Effect::Nothing);
        assert_eq!(s.health().streak(), 0);
        for _ in 1..Policy::BREAKER.trip_after {
            s.record(Outcome::Unreachable, t0, t0);
        }
        let until = t0 + Policy::BREAKER.first;
        assert_eq!(
            s.record(Outcome::Unreachable, t0, t0),
            Effect::Cooling { until }
        );
        assert!(matches!(s.admit(t0), Admit::Wait { trial: false, .. }));
        assert_eq!(s.admit(until), Admit::Trial);
        assert!(matches!(s.admit(until), Admit::Wait { trial: true, .. }));
        // A failed trial doubles the cooldown; nothing is started over HTTP.
        assert_eq!(
            s.record(Outcome::Unreachable, until, until),
            Effect::Cooling {
                until: until + Policy::BREAKER.first * 2
            }
        );
        assert_eq!(s.start_after(), None);
        let later = until + Policy::BREAKER.first * 2;
        assert_eq!(s.admit(later), Admit::Trial);
        assert_eq!(s.record(Outcome::Answered, later, later), Effect::Recovered);
        assert_eq!(s.admit(later), Admit::Go);
    }

    #[test]
    fn an_abandoned_trial_lets_another_go() {
        let mut s = ServerState::new(ServerKind::Http);
        let t0 = Instant::now();
        for _ in 0..Policy::BREAKER.trip_after {
            s.record(Outcome::Unreachable, t0, t0);
        }
        let until = t0 + Policy::BREAKER.first;
        assert_eq!(s.admit(until), Admit::Trial);
        assert_eq!(s.record(Outcome::Abandoned, until, until), Effect::Nothing);
        assert_eq!(s.admit(until), Admit::Trial);
    }

    #[test]
    fn a_child_gates_starts_not_calls_and_restarts_what_its_era_keeps_running() {
        let mut s = ServerState::new(ServerKind::Process);
        let t0 = Instant::now();
        // Before an era is known an end only counts.
        assert_eq!(
            s.record(Outcome::Ended, t0, t0),
            Effect::Cooling {
                until: t0 + Policy::RESTART.first
            }
        );
        assert_eq!(s.admit(t0), Admit::Go, "calls on a running child always go");
        assert_eq!(s.start_after(), Some(t0 + Policy::RESTART.first));
        // A failed call on a running child says nothing of its health.
        assert_eq!(s.record(Outcome::Answered, t0, t0), Effect::Nothing);
        assert!(s.is_bad());
        s.learned(V2026);
        let t1 = t0 + Policy::RESTART.first;
        assert_eq!(
            s.record(Outcome::Ended, t1, t1),
            Effect::Restart {
                after: Some(t1 + Policy::RESTART.first * 2),
                sessions: Sessions::Shared,
            }
        );
        // Children that end at the same moment, started before the cooldown, count once.
        assert_eq!(
            s.record(Outcome::Ended, t0, t1 + Duration::from_millis(1)),
            Effect::Restart {
                after: Some(t1 + Policy::RESTART.first * 2),
                sessions: Sessions::Shared,
            }
        );
        assert_eq!(s.record(Outcome::Worked, t1, t1), Effect::Recovered);
        assert_eq!(s.start_after(), None);
        s.learned(Era::Handshake);
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!(
            s.record(Outcome::Ended, t2, t2),
            Effect::Restart {
                after: Some(t2 + Policy::RESTART.first),
                sessions: Sessions::PooledChild,
            }
        );
    }

    #[test]
    fn a_trial_answered_with_a_stale_era_closes_the_breaker() {
        let mut s = ServerState::new(ServerKind::Http);
        s.learned(V2026);
        let t0 = Instant::now();
        for _ in 0..Policy::BREAKER.trip_after {
            s.record(Outcome::Unreachable, t0, t0);
        }
        let until = t0 + Policy::BREAKER.first;
        assert_eq!(s.admit(until), Admit::Trial);
        assert_eq!(s.record(Outcome::Stale, until, until), Effect::Reprobe);
        assert!(!s.is_bad());
        assert_eq!(s.admit(until), Admit::Go);
        // And an ordinary stale answer resets the count like any answer.
        for _ in 1..Policy::BREAKER.trip_after {
            s.record(Outcome::Unreachable, until, until);
        }
        s.record(Outcome::Stale, until, until);
        assert_eq!(
            s.record(Outcome::Unreachable, until, until),
            Effect::Nothing
        );
    }

    #[test]
    fn an_outcome_said_to_change_nothing_changes_nothing() {
        let outcomes = [
            Outcome::Worked,
            Outcome::Answered,
            Outcome::Unreachable,
            Outcome::Ended,
            Outcome::Stale,
            Outcome::Abandoned,
        ];
        let now = Instant::now();
        for kind in [ServerKind::Http, ServerKind::Process] {
            for outcome in outcomes {
                let mut s = ServerState::new(kind);
                s.learned(Era::Handshake);
                if outcome.changes_nothing(kind, true) {
                    assert_eq!(s.record(outcome, now, now), Effect::Nothing);
                    assert_eq!(s.era(), Some(Era::Handshake));
                    assert_eq!(s.health().streak(), 0);
                    assert!(!s.is_bad());
                }
            }
            // A failing server's success is never skipped.
            assert!(!Outcome::Worked.changes_nothing(kind, false));
            assert!(!Outcome::Ended.changes_nothing(kind, true));
        }
        assert!(Outcome::Answered.changes_nothing(ServerKind::Process, false));
    }

    #[test]
    fn a_stale_era_is_forgotten_whatever_the_kind() {
        for kind in [ServerKind::Http, ServerKind::Process] {
            let mut s = ServerState::new(kind);
            s.learned(Era::Handshake);
            assert!(s.sessions().is_some());
            let now = Instant::now();
            assert_eq!(s.record(Outcome::Stale, now, now), Effect::Reprobe);
            assert_eq!(s.era(), None);
            assert_eq!(s.sessions(), None);
        }
    }

    #[test]
    fn a_session_is_a_request_pair_over_http_and_a_process_over_stdio() {
        let before = Framing::before_session();
        assert_eq!(before.sessions(ServerKind::Http), Sessions::PerExchange);
        assert_eq!(before.sessions(ServerKind::Process), Sessions::PooledChild);
        let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
        for kind in [ServerKind::Http, ServerKind::Process] {
            assert_eq!(stateless.sessions(kind), Sessions::Shared);
        }
    }
}
