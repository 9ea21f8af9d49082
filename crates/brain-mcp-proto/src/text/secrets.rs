//! Every secret of a call in one value, and the one step that makes a peer's text fit to
//! show anywhere.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::redact::{find_all, hide, rewrite_strings};
use super::{cut, known, terminal_safe};

/// The secrets that must never be shown: a bearer token, a proxy's password (alone, as
/// `user:password`, and in its `Basic` form), an OAuth client secret, an access or refresh
/// token, a code, a header value marked secret. Whatever a peer sends passes through
/// [`Secrets::shown`] (or [`Secrets::redact`] where text is not printed) before it reaches
/// an event, an error, a log line or a terminal.
///
/// Besides the secrets it was given, every redaction also removes every secret the
/// process knows (see [`Secret`](super::Secret)): a value made a secret anywhere is never
/// shown through any `Secrets`, even one made before it existed.
///
/// Cheap to clone (shared). Longer secrets are removed first, so one that contains another
/// goes whole. `Debug` shows how many were given, never what they are.
#[derive(Clone, Default)]
pub struct Secrets {
    list: Option<Arc<[Box<str>]>>,
}

impl Secrets {
    /// No secrets: nothing is removed.
    pub const fn none() -> Self {
        Self { list: None }
    }

    /// These secrets (empty strings are skipped, repeats kept once).
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Self::none().with(secrets)
    }

    /// These secrets and `more`.
    #[must_use]
    pub fn with<I, S>(&self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut added: Vec<Box<str>> = Vec::new();
        for secret in more {
            let secret = secret.as_ref();
            if !secret.is_empty()
                && !self.iter().any(|s| s == secret)
                && !added.iter().any(|s| &**s == secret)
            {
                added.push(secret.into());
            }
        }
        if added.is_empty() {
            return self.clone();
        }
        let mut list: Vec<Box<str>> = self.iter().map(Box::from).collect();
        list.append(&mut added);
        // Longest first: a secret that contains another is removed whole.
        list.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self {
            list: Some(list.into()),
        }
    }

    /// These secrets and `other`'s (no copy when either is empty).
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        if other.is_empty() {
            self.clone()
        } else if self.is_empty() {
            other.clone()
        } else {
            self.with(other.iter())
        }
    }

    /// Whether there is nothing to remove: none given, and none known to the process.
    pub fn is_empty(&self) -> bool {
        self.list.as_ref().is_none_or(|l| l.is_empty()) && known::is_empty()
    }

    /// How many secrets were given.
    pub fn len(&self) -> usize {
        self.list.as_ref().map_or(0, |l| l.len())
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        self.list.iter().flat_map(|l| l.iter()).map(|s| &**s)
    }

    /// `text` with every secret removed, in every spelling [`redact`](super::redact) knows (as written,
    /// percent-encoded, JSON-escaped, in any ASCII case).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redact_with(known::snapshot().as_deref(), text)
    }

    /// [`Self::redact`] with the registry's snapshot taken once by the caller. The spans
    /// of this value's secrets and of every known one are found on the same text and
    /// merged before anything is replaced, so no secret can hide another by starting
    /// inside it.
    fn redact_with<'a>(&self, known: Option<&known::Snapshot>, text: &'a str) -> Cow<'a, str> {
        if self.list.is_none() && known.is_none() {
            return Cow::Borrowed(text);
        }
        hide(text, &|hay: &[u8]| {
            let mut spans = known.map(|k| k.spans(hay)).unwrap_or_default();
            for secret in self.iter() {
                let found = find_all(hay, secret.as_bytes());
                spans.extend(found.into_iter().map(|s| (s, s + secret.len())));
            }
            super::redact::merge(spans)
        })
    }

    /// Removes every secret from the strings and keys of `value`; whether anything changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        let known = known::snapshot();
        rewrite_strings(value, &|text| self.redact_with(known.as_deref(), text))
    }

    /// Raw JSON with every secret removed from its decoded strings and keys (the same
    /// value when there was none); text that is not JSON is redacted as text and dropped
    /// (`None`) when that is not JSON either.
    pub fn redact_json(&self, raw: &RawValue) -> Option<Box<RawValue>> {
        if self.is_empty() {
            return Some(raw.to_owned());
        }
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(mut value) => {
                if self.redact_value(&mut value) {
                    return serde_json::value::to_raw_value(&value).ok();
                }
                // The parsed value hides what a key written twice held before its last
                // value: such text is given as the value it parsed to, which was searched.
                if super::redact::members(&value) != super::marks::colons(raw.get()) {
                    return serde_json::value::to_raw_value(&value).ok();
                }
                match self.redact(raw.get()) {
                    Cow::Borrowed(_) => Some(raw.to_owned()),
                    Cow::Owned(text) => RawValue::from_string(text)
                        .ok()
                        .or_else(|| serde_json::value::to_raw_value(&value).ok()),
                }
            }
            Err(_) => RawValue::from_string(self.redact(raw.get()).into_owned()).ok(),
        }
    }

    /// A peer's text as it may be shown anywhere: every secret removed, then every
    /// character a terminal would act on escaped, then cut to `max` bytes, in that order
    /// (a cut never leaves part of a secret, an escape never hides one).
    pub fn shown<'a>(&self, text: &'a str, max: usize) -> Cow<'a, str> {
        match self.redact(text) {
            Cow::Borrowed(text) => match terminal_safe(text) {
                Cow::Borrowed(text) => cut(text, max),
                Cow::Owned(safe) => Cow::Owned(cut(&safe, max).into_owned()),
            },
            Cow::Owned(clean) => {
                let safe = terminal_safe(&clean);
                Cow::Owned(cut(&safe, max).into_owned())
            }
        }
    }

    /// An identifier a peer chose (a session id) as logs show it: its first `chars`
    /// characters, enough to tell ids apart. One that holds a secret is shown redacted,
    /// never cut, so no prefix of a secret is ever printed.
    pub fn short_id(&self, id: &str, chars: usize) -> String {
        if let Cow::Owned(clean) = self.redact(id) {
            return self
                .shown(&clean, 4 * chars + super::REDACTED.len())
                .into_owned();
        }
        let mut shown: String = id.chars().take(chars).collect();
        // An id that is part of a secret (a token's first characters) shows nothing of it.
        if self.inside_a_secret(&shown) {
            return super::REDACTED.to_owned();
        }
        if shown.len() < id.len() {
            shown.push('…');
        }
        terminal_safe(&shown).into_owned()
    }

    /// Whether `piece` (ASCII case ignored) lies inside one of these secrets or one the
    /// process knows.
    fn inside_a_secret(&self, piece: &str) -> bool {
        let folded = piece.to_ascii_lowercase();
        self.iter()
            .any(|s| s.to_ascii_lowercase().contains(&folded))
            || known::snapshot().is_some_and(|k| k.inside_a_secret(piece))
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({})", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_goes_longest_first() {
        let secrets = Secrets::new(["pass", "user:pass", "", "pass"]);
        assert_eq!(secrets.len(), 2);
        assert_eq!(
            secrets.redact("a user:pass b pass c"),
            "a [redacted] b [redacted] c"
        );
        assert_eq!(format!("{secrets:?}"), "Secrets(2)");
        // Empty unless the process knows a secret (other tests may have made one).
        assert_eq!(Secrets::none().len(), 0);
        assert!(matches!(secrets.redact("clear"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_text_is_searched_where_its_parsed_value_hides_a_secret() {
        let secrets = Secrets::new(["tok-HIDDEN-77"]);
        // The parsed value keeps the last "a": the secret is only in the text.
        for text in [
            r#"{"a":"tok-HIDDEN-77","a":"x"}"#,
            r#"{"a":"tok-\u0048IDDEN-77","a":"x"}"#,
            r#"[{"b":{"a":"tok-HIDDEN-77","a":"x"}}, "k: v"]"#,
        ] {
            let raw = RawValue::from_string(text.into()).unwrap();
            let clean = secrets.redact_json(&raw).unwrap();
            assert!(!clean.get().contains("HIDDEN"), "{}", clean.get());
        }
        // Nothing to hide: the text as it was, digits included.
        let raw = RawValue::from_string(r#"{"n": 123456789012345678901234567890}"#.into());
        let same = secrets.redact_json(&raw.unwrap()).unwrap();
        assert_eq!(same.get(), r#"{"n": 123456789012345678901234567890}"#);
    }

    #[test]
    fn union_shares_when_one_side_is_empty() {
        let a = Secrets::new(["tok-1"]);
        let both = a.union(&Secrets::new(["proxy-pw"]));
        assert_eq!(both.len(), 2);
        assert_eq!(a.union(&Secrets::none()).len(), 1);
        assert_eq!(Secrets::none().union(&a).len(), 1);
    }

    #[test]
    fn shown_redacts_then_escapes_then_cuts() {
        let secrets = Secrets::new(["tok-SECRET-1"]);
        let text = format!("x\u{202e}y {} z", "tok-SECRET-1");
        assert_eq!(secrets.shown(&text, 100), "x\\u{202e}y [redacted] z");
        // A cut after redaction cannot leave a prefix of the secret.
        let long = format!("{}{}", "a".repeat(20), "tok-SECRET-1");
        let shown = secrets.shown(&long, 25);
        assert!(!shown.contains("tok-"), "{shown}");
    }

    #[test]
    fn a_session_id_holding_a_secret_shows_no_prefix_of_it() {
        let secrets = Secrets::new(["tok-SECRET-123"]);
        let shown = secrets.short_id("tok-SECRET-123", 8);
        assert_eq!(shown, "[redacted]");
        let short = Secrets::new(["abc"]);
        assert_eq!(short.short_id("abc", 8), "[redacted]");
        assert_eq!(secrets.short_id("sess-1234567890", 8), "sess-123…");
        assert_eq!(secrets.short_id("s\u{1b}[2K", 8), "s\\x1b[2K");
    }

    #[test]
    fn a_secret_found_as_written_cannot_keep_an_escaped_one_around_it_from_being_found() {
        // The password alone is found as written; the pair only once `\u003a` is decoded.
        let secrets = Secrets::new(["proxy-user:Pr0xy-pass-5ecret", "Pr0xy-pass-5ecret"]);
        assert_eq!(
            secrets.redact(r"x proxy-user\u003aPr0xy-pass-5ecret y"),
            "x [redacted] y"
        );
    }

    #[test]
    fn json_is_redacted_on_its_decoded_strings() {
        let secrets = Secrets::new(["tok/1"]);
        let raw = RawValue::from_string(r#"{"a":"tok\/1"}"#.to_owned()).unwrap();
        assert_eq!(
            secrets.redact_json(&raw).unwrap().get(),
            r#"{"a":"[redacted]"}"#
        );
    }
}
