//! When a token may be sent: the lifetime decisions of a held token, with time passed in.
//!
//! The other lifecycle rules live here too: how long a failed token request holds back
//! the next ([`FailureHold`]), which issuer a refresh token may go to
//! ([`refresh_goes_to`]), and that a token the server refused is never used again, even
//! when an authorization server hands the same one back ([`usable_after_refusal`]).
//!
//! A token is *fresh* while more than its renewal margin is left: a request that would
//! start a piece of work gets a new one before that. It stays *usable* until it expires:
//! a message that closes or follows up work already under way (a cancel, the end of a
//! session, `notifications/initialized`) still carries it inside the margin rather than
//! going out bare, since the server would refuse a message without a token and the work
//! would run on unclosed. A token the server refused is neither, ever again.

use std::time::{Duration, Instant};

/// A token this close to its expiry (or a quarter of its lifetime, if shorter) is renewed
/// before a request uses it.
pub const RENEW_MARGIN: Duration = Duration::from_secs(30);
/// Lifetimes are read up to a year; a longer one (or one past the clock's range) counts
/// as no expiry.
pub const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// The lifetime of a token held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifetime {
    /// When it expires and the renewal margin before that; `None` for no stated expiry.
    expires: Option<(Instant, Duration)>,
    refused: bool,
}

impl Lifetime {
    /// A token granted at `now` for `seconds` (as [`super::token::lifetime`] read it):
    /// `None` or a lifetime past [`MAX_LIFETIME`] is no expiry; the margin is
    /// [`RENEW_MARGIN`] or a quarter of the lifetime, whichever is shorter.
    pub fn granted(now: Instant, seconds: Option<u64>) -> Self {
        let expires = seconds.and_then(|s| {
            let life = Duration::from_secs(s);
            let at = now.checked_add(life).filter(|_| life <= MAX_LIFETIME)?;
            Some((at, RENEW_MARGIN.min(life / 4)))
        });
        Self {
            expires,
            refused: false,
        }
    }

    /// A token kept by a host with `left` of its life, seen at `now`.
    pub fn kept(now: Instant, left: Option<Duration>) -> Self {
        // A lifetime past the clock's range (or past a year) is no expiry, as when granted.
        let expires = left.and_then(|left| {
            let at = now.checked_add(left).filter(|_| left <= MAX_LIFETIME)?;
            Some((at, RENEW_MARGIN.min(left / 4)))
        });
        Self {
            expires,
            refused: false,
        }
    }

    /// Whether a request that starts work may carry it at `now` (more than the margin
    /// left, never refused).
    pub fn fresh(&self, now: Instant) -> bool {
        !self.refused && self.expires.is_none_or(|(at, margin)| at > now + margin)
    }

    /// Whether a message that closes or follows up work may carry it at `now` (not yet
    /// expired, never refused).
    pub fn usable(&self, now: Instant) -> bool {
        !self.refused && self.expires.is_none_or(|(at, _)| at > now)
    }

    /// The server refused it: never sent again (a refresh token may still renew it).
    pub fn refuse(&mut self) {
        self.refused = true;
    }

    /// Whether a server refused it.
    pub fn is_refused(&self) -> bool {
        self.refused
    }

    /// When it expires, if it does.
    pub fn expires_at(&self) -> Option<Instant> {
        self.expires.map(|(at, _)| at)
    }

    /// The renewal margin, if it expires.
    pub fn margin(&self) -> Option<Duration> {
        self.expires.map(|(_, margin)| margin)
    }
}

/// After a failed search or token request, calls wait this long before asking again
/// (they fail with the same reason meanwhile): a server that refuses every token cannot
/// make the host hammer its authorization server, or prompt a user over and over.
pub const FAILURE_HOLD: Duration = Duration::from_secs(10);

/// The last failure of a search or token request (whatever the caller keeps of it: its
/// reason, typed), held for [`FAILURE_HOLD`].
#[derive(Clone, Debug)]
pub struct FailureHold<T = String> {
    failed: Option<(Instant, T)>,
}

impl<T> Default for FailureHold<T> {
    fn default() -> Self {
        Self { failed: None }
    }
}

impl<T> FailureHold<T> {
    /// Notes how a request ended at `now`: a failure is held, a success clears it.
    pub fn note(&mut self, now: Instant, failure: Option<T>) {
        self.failed = failure.map(|why| (now, why));
    }

    /// The failure still held at `now`, if any.
    pub fn held(&self, now: Instant) -> Option<&T> {
        self.failed
            .as_ref()
            .filter(|(at, _)| now.saturating_duration_since(*at) < FAILURE_HOLD)
            .map(|(_, why)| why)
    }
}

/// Whether a refresh token granted by `granted_by` may be sent to `issuer`: only to the
/// authorization server that granted it (issuers compared exactly).
pub fn refresh_goes_to(granted_by: &str, issuer: &str) -> bool {
    granted_by == issuer
}

/// Whether a token just issued may be used, after the server refused `refused`: never
/// when it is the refused one handed back.
pub fn usable_after_refusal(refused: Option<&str>, new: &str) -> bool {
    refused != Some(new)
}

#[cfg(test)]
#[path = "tests/lifetime.rs"]
mod tests;
