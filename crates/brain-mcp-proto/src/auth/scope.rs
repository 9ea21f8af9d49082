//! Which scopes to ask for, and asking again when a server says they were not enough.

/// How many times one call asks for more scope after `insufficient_scope` before it
/// gives up.
pub const MAX_STEP_UPS: u32 = 3;

/// The scope of a first token request: the challenge's `scope` when it names one, else
/// every scope the protected resource metadata lists (`scopes_supported`), else none
/// (the parameter is left out).
pub fn first_scope(challenge: Option<&str>, supported: Option<&[String]>) -> Option<String> {
    let from_challenge = challenge.map(str::trim).filter(|s| !s.is_empty());
    if let Some(scope) = from_challenge {
        return Some(scope.to_owned());
    }
    supported.filter(|s| !s.is_empty()).map(|s| s.join(" "))
}

/// The scopes asked for so far for one server, and how many times more were asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepUp {
    scopes: Vec<String>,
    rounds: u32,
}

impl StepUp {
    /// Starts from the scope of the first request (space-separated), if any.
    pub fn new(first: Option<&str>) -> Self {
        let mut step = Self::default();
        step.add(first.unwrap_or_default());
        step
    }

    /// The scope to ask for after a `403 insufficient_scope` whose challenge names
    /// `needed`: the union of what was asked before and `needed`, in first-seen order.
    /// `None` when the limit is reached or the union asks for nothing new (asking again
    /// could only loop).
    pub fn next(&mut self, needed: Option<&str>) -> Option<String> {
        if self.rounds >= MAX_STEP_UPS {
            return None;
        }
        if !self.add(needed.unwrap_or_default()) {
            return None;
        }
        self.rounds += 1;
        Some(self.scopes.join(" "))
    }

    /// Adds each scope of `list` not held yet; whether any was new.
    fn add(&mut self, list: &str) -> bool {
        let mut added = false;
        for scope in list.split_ascii_whitespace() {
            if !self.scopes.iter().any(|s| s == scope) {
                self.scopes.push(scope.to_owned());
                added = true;
            }
        }
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_scope_prefers_the_challenge() {
        let supported = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            first_scope(Some("x y"), Some(&supported)).as_deref(),
            Some("x y")
        );
        assert_eq!(
            first_scope(Some("  "), Some(&supported)).as_deref(),
            Some("a b")
        );
        assert_eq!(first_scope(None, Some(&[])), None);
        assert_eq!(first_scope(None, None), None);
    }

    #[test]
    fn step_up_unions_and_stops() {
        let mut step = StepUp::new(Some("read"));
        assert_eq!(step.next(Some("write")).as_deref(), Some("read write"));
        // Nothing new: asking again would loop.
        assert_eq!(step.next(Some("write read")), None);
        assert_eq!(
            step.next(Some("admin")).as_deref(),
            Some("read write admin")
        );
        assert_eq!(step.next(Some("x")).as_deref(), Some("read write admin x"));
        // The limit.
        assert_eq!(step.next(Some("y")), None);
    }
}
