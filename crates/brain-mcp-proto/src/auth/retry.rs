//! What a client does when a server refuses a request for want of authorization: get a
//! token, get a fresh one, ask for more scope, or stop. A refused request did not run,
//! so sending it again keeps at-most-once; the limits keep it from looping.

use super::challenge::BearerChallenge;
use super::scope::StepUp;

/// What to do after a 401 or 403.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Get a token (the first, or a fresh one in place of the one refused) and resend.
    Authorize,
    /// Get a token with this scope (space-separated) and resend.
    StepUp(String),
    /// Send it again as it is, with a new DPoP proof carrying the nonce the server gave.
    Resend,
    /// Stop: the failure is final for this call.
    GiveUp(&'static str),
}

/// The rounds of one request: how many fresh tokens it has had, and its scope steps.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    fresh: u32,
    step_up: Option<StepUp>,
    nonces: u32,
}

impl Rounds {
    /// The rounds of a request first sent with a token (`true`: a refusal gets one fresh
    /// token) or without one (one token, then one fresh one).
    pub fn new(sent_with_token: bool) -> Self {
        Self {
            fresh: u32::from(sent_with_token),
            step_up: None,
            nonces: 0,
        }
    }

    /// The decision after a 401 that asked for a DPoP nonce
    /// ([`Demand::Nonce`](super::dpop::Demand::Nonce)): send the request again with it,
    /// at most [`MAX_NONCE_ROUNDS`](super::dpop::MAX_NONCE_ROUNDS) times.
    pub fn after_nonce(&mut self) -> Refusal {
        if self.nonces < super::dpop::MAX_NONCE_ROUNDS {
            self.nonces += 1;
            Refusal::Resend
        } else {
            Refusal::GiveUp("the server kept asking for a new DPoP nonce")
        }
    }

    /// The decision after `status` with `challenge`, given the scope asked for so far.
    /// A 401 gets a token, and one fresh token when that one was refused; a 403
    /// `insufficient_scope` steps up within [`MAX_STEP_UPS`](super::scope::MAX_STEP_UPS);
    /// any other 403 is final.
    pub fn after(
        &mut self,
        status: u16,
        challenge: Option<&BearerChallenge>,
        asked: Option<&str>,
    ) -> Refusal {
        match status {
            401 if self.fresh < 2 => {
                self.fresh += 1;
                Refusal::Authorize
            }
            401 => Refusal::GiveUp("the server refused a fresh token"),
            403 if challenge.is_some_and(BearerChallenge::insufficient_scope) => {
                let step = self.step_up.get_or_insert_with(|| StepUp::new(asked));
                match step.next(challenge.and_then(|c| c.scope.as_deref())) {
                    Some(scope) => Refusal::StepUp(scope),
                    None => Refusal::GiveUp("the server still asks for more scope"),
                }
            }
            _ => Refusal::GiveUp("the server refused the request"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_challenge(scope: &str) -> BearerChallenge {
        super::super::bearer(&format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\""
        ))
        .unwrap()
    }

    #[test]
    fn a_401_gets_a_token_then_one_fresh_one_then_stops() {
        let mut rounds = Rounds::new(false);
        assert_eq!(rounds.after(401, None, None), Refusal::Authorize);
        assert_eq!(rounds.after(401, None, None), Refusal::Authorize);
        assert!(matches!(rounds.after(401, None, None), Refusal::GiveUp(_)));
        // Sent with a token already: one fresh token only.
        let mut rounds = Rounds::new(true);
        assert_eq!(rounds.after(401, None, None), Refusal::Authorize);
        assert!(matches!(rounds.after(401, None, None), Refusal::GiveUp(_)));
    }

    #[test]
    fn insufficient_scope_steps_up_to_the_limit() {
        let mut rounds = Rounds::default();
        let mut asked = String::from("a");
        for (i, more) in ["b", "c", "d"].iter().enumerate() {
            match rounds.after(403, Some(&scope_challenge(more)), Some(&asked)) {
                Refusal::StepUp(scope) => {
                    assert!(scope.ends_with(more), "{i}: {scope}");
                    asked = scope;
                }
                other => panic!("{i}: {other:?}"),
            }
        }
        assert_eq!(asked, "a b c d");
        assert!(matches!(
            rounds.after(403, Some(&scope_challenge("e")), Some(&asked)),
            Refusal::GiveUp(_)
        ));
    }

    #[test]
    fn nonce_rounds_are_bounded() {
        let mut rounds = Rounds::new(true);
        assert_eq!(rounds.after_nonce(), Refusal::Resend);
        assert_eq!(rounds.after_nonce(), Refusal::Resend);
        assert!(matches!(rounds.after_nonce(), Refusal::GiveUp(_)));
        // Nonce rounds use none of the fresh-token rounds.
        assert_eq!(rounds.after(401, None, None), Refusal::Authorize);
    }

    #[test]
    fn a_403_without_scope_news_is_final() {
        let mut rounds = Rounds::default();
        assert!(matches!(rounds.after(403, None, None), Refusal::GiveUp(_)));
        let same = scope_challenge("a");
        assert!(matches!(
            rounds.after(403, Some(&same), Some("a")),
            Refusal::GiveUp(_)
        ));
    }
}
