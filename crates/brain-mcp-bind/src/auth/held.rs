//! What an authorizer keeps between calls: the token held, and every secret it has
//! handled (tokens it no longer holds, a client secret read from the environment, a
//! registered client's secret), so a server that echoes one of them back is redacted.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use brain_mcp_proto::auth::Token;
use brain_mcp_proto::text::Secrets;
use brain_mcp_transport::BearerToken;
use brain_tools_core::Secret;

use super::given::StoredTokens;

/// A token this close to its expiry (or a quarter of its lifetime, if shorter) is renewed
/// before it is used.
const RENEW_MARGIN: Duration = Duration::from_secs(30);
/// Lifetimes are read up to a year; a longer one (or one past the clock's range) counts
/// as no expiry.
const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);
/// Secrets remembered besides the token held, oldest forgotten first.
const REMEMBERED: usize = 16;

/// The token held.
#[derive(Clone)]
pub(super) struct Held {
    pub(super) token: BearerToken,
    /// When it expires, and the renewal margin before that.
    pub(super) expires: Option<(Instant, Duration)>,
    pub(super) refresh: Option<String>,
    pub(super) scope: Option<String>,
    /// The authorization server that issued it: a refresh token goes back there only.
    pub(super) issuer: String,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

impl Held {
    /// A token just granted by `issuer`; `asked` is the scope asked for, and `previous`
    /// the token it replaces (whose refresh token stays when the server sent no new one,
    /// as RFC 6749 §6 allows).
    pub(super) fn new(
        token: Token,
        asked: Option<String>,
        issuer: &str,
        previous: Option<&Self>,
    ) -> Self {
        let expires = token.expires_in.and_then(|s| {
            let life = Duration::from_secs(s);
            let at = Instant::now()
                .checked_add(life)
                .filter(|_| life <= MAX_LIFETIME)?;
            Some((at, RENEW_MARGIN.min(life / 4)))
        });
        let kept = previous
            .filter(|p| p.issuer == issuer)
            .and_then(|p| p.refresh.clone());
        Self {
            token: BearerToken::new(token.access_token.clone()),
            expires,
            refresh: token.refresh_token.clone().or(kept),
            scope: token.scope.clone().or(asked),
            issuer: issuer.to_owned(),
        }
    }

    /// Tokens a host kept; `None` when they hold no access token worth sending and no
    /// refresh token.
    pub(super) fn from_stored(stored: StoredTokens) -> Option<Self> {
        let expires = stored.expires_at.map(|at| {
            let left = at.duration_since(SystemTime::now()).unwrap_or_default();
            let now = Instant::now();
            (
                now.checked_add(left).unwrap_or(now),
                RENEW_MARGIN.min(left / 4),
            )
        });
        let token = stored.access_token.map(|t| BearerToken::new(t.expose()));
        let mut held = Self {
            token: token
                .clone()
                .unwrap_or_else(|| BearerToken::new(String::new())),
            expires,
            refresh: stored.refresh_token.map(|r| r.expose().to_owned()),
            scope: stored.scope,
            issuer: stored.issuer,
        };
        if token.is_none() {
            held.refuse();
        }
        (token.is_some() || held.refresh.is_some()).then_some(held)
    }

    /// What a host keeps of it.
    pub(super) fn to_stored(&self) -> StoredTokens {
        let mut stored = StoredTokens::new(self.issuer.clone());
        stored.access_token = Some(Secret::new(self.token.expose()));
        stored.expires_at = self
            .expires
            .map(|(at, _)| SystemTime::now() + at.saturating_duration_since(Instant::now()));
        stored.refresh_token = self.refresh.as_deref().map(Secret::new);
        stored.scope = self.scope.clone();
        stored
    }

    /// Whether it may be sent now.
    pub(super) fn fresh(&self, now: Instant) -> bool {
        self.expires.is_none_or(|(at, margin)| at > now + margin)
    }

    /// Never to be sent again (a refresh token, if any, may still get a new one).
    pub(super) fn refuse(&mut self) {
        self.expires = Some((Instant::now(), Duration::ZERO));
    }
}

/// Secrets handled but not held, bounded.
#[derive(Debug, Default)]
pub(super) struct Remembered(VecDeque<String>);

impl Remembered {
    /// Remembers `secret` (once).
    pub(super) fn add(&mut self, secret: &str) {
        if secret.is_empty() || self.0.iter().any(|s| s == secret) {
            return;
        }
        if self.0.len() == REMEMBERED {
            self.0.pop_front();
        }
        self.0.push_back(secret.to_owned());
    }

    /// Remembers what `held` carried, as it is replaced.
    pub(super) fn retire(&mut self, held: &Held) {
        self.add(held.token.expose());
        if let Some(refresh) = &held.refresh {
            self.add(refresh);
        }
    }

    /// These and `held`'s, as one set.
    pub(super) fn secrets(&self, held: Option<&Held>) -> Secrets {
        let current = held
            .into_iter()
            .flat_map(|h| std::iter::once(h.token.expose().to_owned()).chain(h.refresh.clone()));
        Secrets::new(self.0.iter().cloned().chain(current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(body: &str) -> Token {
        brain_mcp_proto::auth::token::read_token(200, body.as_bytes()).unwrap()
    }

    #[test]
    fn lifetimes_are_bounded_and_refresh_tokens_kept() {
        let huge = token(
            r#"{"access_token":"a","token_type":"Bearer","expires_in":18446744073709551615}"#,
        );
        let held = Held::new(huge, None, "i", None);
        assert!(
            held.expires.is_none(),
            "an absurd lifetime counts as none, without a panic"
        );
        assert!(held.fresh(Instant::now()));
        let first = Held::new(
            token(
                r#"{"access_token":"a","token_type":"Bearer","expires_in":8,"refresh_token":"r1"}"#,
            ),
            None,
            "i",
            None,
        );
        assert_eq!(first.expires.map(|e| e.1), Some(Duration::from_secs(2)));
        let second = Held::new(
            token(r#"{"access_token":"b","token_type":"Bearer"}"#),
            None,
            "i",
            Some(&first),
        );
        assert_eq!(second.refresh.as_deref(), Some("r1"));
        let elsewhere = Held::new(
            token(r#"{"access_token":"c","token_type":"Bearer"}"#),
            None,
            "j",
            Some(&first),
        );
        assert_eq!(
            elsewhere.refresh, None,
            "a refresh token stays with its issuer"
        );
        let mut refused = second.clone();
        refused.refuse();
        assert!(!refused.fresh(Instant::now()));
    }

    #[test]
    fn remembered_secrets_are_bounded() {
        let mut memory = Remembered::default();
        for i in 0..40 {
            memory.add(&format!("secret-{i:02}"));
        }
        memory.add("secret-39");
        let secrets = memory.secrets(None);
        assert_eq!(secrets.len(), REMEMBERED);
        assert_eq!(
            secrets.redact("secret-39 secret-00"),
            "[redacted] secret-00"
        );
    }
}
