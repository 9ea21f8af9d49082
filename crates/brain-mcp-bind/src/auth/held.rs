//! What an authorizer keeps between calls: the token held, and every secret it has
//! handled (tokens it no longer holds, a client secret read from the environment, a
//! registered client's secret), so a server that echoes one of them back is redacted.

use std::collections::VecDeque;
use std::time::{Instant, SystemTime};

use brain_mcp_proto::auth::Token;
use brain_mcp_proto::auth::lifetime::Lifetime;
use brain_mcp_proto::text::{Secret, Secrets};
use brain_mcp_transport::BearerToken;

use super::store::StoredTokens;

/// Secrets remembered besides the token held, oldest forgotten first.
const REMEMBERED: usize = 16;

/// The token held.
#[derive(Clone)]
pub(super) struct Held {
    pub(super) token: BearerToken,
    /// When it may be sent (the core's decision).
    pub(super) life: Lifetime,
    pub(super) refresh: Option<Secret>,
    pub(super) scope: Option<String>,
    /// The authorization server that issued it: a refresh token goes back there only.
    pub(super) issuer: String,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("life", &self.life)
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
        let life = Lifetime::granted(Instant::now(), token.expires_in);
        let kept = previous
            .filter(|p| brain_mcp_proto::auth::lifetime::refresh_goes_to(&p.issuer, issuer))
            .and_then(|p| p.refresh.clone());
        let access = token.access_token.clone();
        Self {
            token: if token.is_dpop() {
                BearerToken::dpop_bound(access)
            } else {
                BearerToken::from_secret(access)
            },
            life,
            refresh: token.refresh_token.clone().or(kept),
            scope: token.scope.clone().or(asked),
            issuer: issuer.to_owned(),
        }
    }

    /// Tokens a host kept; `None` when they hold no access token worth sending and no
    /// refresh token.
    pub(super) fn from_stored(stored: StoredTokens) -> Option<Self> {
        let left = stored
            .expires_at
            .map(|at| at.duration_since(SystemTime::now()).unwrap_or_default());
        let life = Lifetime::kept(Instant::now(), left);
        // A kept token is one a peer issued; one a header cannot carry is not sent.
        let token = stored
            .access_token
            .filter(|t| t.expose().bytes().all(|b| b.is_ascii_graphic()))
            .map(|t| BearerToken::from_secret(Secret::issued(t.expose())));
        let mut held = Self {
            token: token
                .clone()
                .unwrap_or_else(|| BearerToken::from_secret(Secret::issued(String::new()))),
            life,
            refresh: stored.refresh_token.map(|r| Secret::issued(r.expose())),
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
        stored.access_token = Some(brain_tools_core::Secret::new(self.token.expose()));
        stored.expires_at = self
            .life
            .expires_at()
            .map(|at| SystemTime::now() + at.saturating_duration_since(Instant::now()));
        stored.refresh_token = self
            .refresh
            .as_ref()
            .map(|r| brain_tools_core::Secret::new(r.expose()));
        stored.scope = self.scope.clone();
        stored
    }

    /// Whether a request that starts work may carry it now.
    pub(super) fn fresh(&self, now: Instant) -> bool {
        self.life.fresh(now)
    }

    /// Whether a message that closes or follows up work may carry it now.
    pub(super) fn usable(&self, now: Instant) -> bool {
        self.life.usable(now)
    }

    /// Never to be sent again (a refresh token, if any, may still get a new one).
    pub(super) fn refuse(&mut self) {
        self.life.refuse();
    }
}

/// Secrets handled but not held, bounded. Every one is also known to the process's
/// redaction step from the moment it was made; this keeps the latest few in the
/// authorizer's own set, whatever that registry forgets. Its `Debug` shows the count.
#[derive(Default)]
pub(super) struct Remembered(VecDeque<Secret>);

impl std::fmt::Debug for Remembered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Remembered({})", self.0.len())
    }
}

impl Remembered {
    /// Remembers `secret` (once).
    pub(super) fn add(&mut self, secret: &Secret) {
        if secret.expose().is_empty() || self.0.iter().any(|s| s == secret) {
            return;
        }
        if self.0.len() == REMEMBERED {
            self.0.pop_front();
        }
        self.0.push_back(secret.clone());
    }

    /// Remembers what `held` carried, as it is replaced.
    pub(super) fn retire(&mut self, held: &Held) {
        self.add(&Secret::issued(held.token.expose()));
        if let Some(refresh) = &held.refresh {
            self.add(refresh);
        }
    }

    /// The bytes of the secrets remembered.
    pub(super) fn bytes(&self) -> usize {
        self.0.iter().map(|s| s.expose().len()).sum()
    }

    /// These and `held`'s, as one set.
    pub(super) fn secrets(&self, held: Option<&Held>) -> Secrets {
        let current = held.into_iter().flat_map(|h| {
            std::iter::once(h.token.expose()).chain(h.refresh.as_ref().map(Secret::expose))
        });
        Secrets::new(self.0.iter().map(Secret::expose).chain(current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
            held.life.expires_at().is_none(),
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
        assert_eq!(first.life.margin(), Some(Duration::from_secs(2)));
        let second = Held::new(
            token(r#"{"access_token":"b","token_type":"Bearer"}"#),
            None,
            "i",
            Some(&first),
        );
        assert_eq!(second.refresh.as_ref().map(Secret::expose), Some("r1"));
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
            // Short values, which the process-wide registry does not keep, so what is
            // redacted below is the authorizer's own set.
            memory.add(&Secret::new(format!("s{i:02}")));
        }
        memory.add(&Secret::new("s39"));
        let secrets = memory.secrets(None);
        assert_eq!(secrets.len(), REMEMBERED);
        assert_eq!(secrets.redact("s39 s00"), "[redacted] s00");
    }
}
