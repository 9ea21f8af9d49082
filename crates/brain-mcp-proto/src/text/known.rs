//! Every secret this process holds or held, known to the redaction step from the moment
//! it exists.
//!
//! A secret used to be a string some code had to remember to add to a call's list, in
//! each spelling a peer could echo, at the right moment; the newest surface forgot. Here
//! a secret is a type: making a [`Secret`] (or calling [`learn`] / [`learn_basic`] where a
//! value arrives in another type) registers each of its forms with this process's
//! registry, and [`Secrets`](super::Secrets) consults the registry on every redaction, so
//! text shown anywhere is cleared of every secret the process knows, whichever call it
//! belongs to, before and after a token is first got or renewed.
//!
//! Bounds: at most [`MAX_FORMS`] forms are kept, the oldest forgotten first (a call's own
//! secrets are also carried in its [`Secrets`](super::Secrets), so they are removed from
//! its text whatever the registry forgot). Forms shorter than [`MIN_FORM`] bytes are not
//! registered process-wide: they would blank common words in every output; a call that
//! holds one still removes it from its own text.
//!
//! The registry is read through a snapshot shared between threads and rebuilt only when a
//! new form arrives, so a redaction with nothing registered costs one atomic load, and one
//! with forms costs one pass over the text whatever their number (Aho-Corasick, ASCII case
//! ignored, over the text as written and as decoded).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Anchored, Input, MatchKind, StartKind};
use base64::Engine as _;
use zeroize::Zeroizing;

use super::redact::hide;

/// The most forms the registry keeps.
pub const MAX_FORMS: usize = 4096;
/// The shortest form registered process-wide, in bytes.
pub const MIN_FORM: usize = 6;

/// A secret value: a bearer or access token, a refresh token, a client secret, a private
/// key, a signed assertion, an authorization code, a PKCE verifier, a proxy credential, a
/// header value marked secret.
///
/// Making one registers it with the process's redaction step before any byte of it can
/// be sent. It has no `Display`; its `Debug` prints `Secret(***)`; its memory is zeroed
/// when the last clone drops. Only [`Secret::expose`] reads it, at the one place that
/// sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<Zeroizing<String>>);

impl Secret {
    /// A secret holding `value`, registered (see the module docs).
    pub fn new(value: impl Into<String>) -> Self {
        let value = Zeroizing::new(value.into());
        learn(&value);
        Self(Arc::new(value))
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for Secret {
    /// A JSON string, made a secret (registered) as it is read.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Zeroizing::new(String::deserialize(deserializer)?);
        learn(&value);
        Ok(Self(Arc::new(value)))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Registers `value` (one form) with the process's redaction step. Cheap when it is
/// already known.
pub fn learn(value: &str) {
    learn_all([value]);
}

/// Registers the forms a client's secret takes in an HTTP Basic `Authorization` header
/// (RFC 6749 §2.3.1): `id:secret` as written and with both parts form-encoded, and the
/// base64 of each, besides the secret itself. A peer that echoes the header it received
/// then shows none of them.
pub fn learn_basic(client_id: &str, secret: &str) {
    let plain = Zeroizing::new(format!("{client_id}:{secret}"));
    let encoded = Zeroizing::new(format!(
        "{}:{}",
        crate::auth::token::encode(client_id),
        crate::auth::token::encode(secret)
    ));
    let b64 = |pair: &str| Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(pair));
    let (plain_b64, encoded_b64) = (b64(&plain), b64(&encoded));
    learn_all([
        secret,
        plain.as_str(),
        encoded.as_str(),
        plain_b64.as_str(),
        encoded_b64.as_str(),
    ]);
}

/// Registers each of `forms`.
fn learn_all<'a>(forms: impl IntoIterator<Item = &'a str>) {
    let fresh: Vec<&str> = forms
        .into_iter()
        .filter(|f| f.len() >= MIN_FORM && snapshot().is_none_or(|s| !s.knows(f)))
        .collect();
    if fresh.is_empty() {
        return;
    }
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let mut added = false;
    for form in fresh {
        if registry.forms.iter().any(|f| f.as_str() == form) {
            continue;
        }
        if registry.forms.len() == MAX_FORMS {
            registry.forms.pop_front();
        }
        registry.forms.push_back(Zeroizing::new(form.to_owned()));
        added = true;
    }
    if added {
        registry.built = None;
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

/// Whether the process knows no secret.
pub(super) fn is_empty() -> bool {
    GENERATION.load(Ordering::Acquire) == 0
}

/// `text` with every known secret removed (see [`super::redact`] for the spellings).
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    match snapshot() {
        None => Cow::Borrowed(text),
        Some(snapshot) => hide(text, &|hay: &[u8]| snapshot.spans(hay)),
    }
}

/// How many forms the process knows.
pub fn known_forms() -> usize {
    snapshot().map_or(0, |s| s.count)
}

/// The registry: the forms, oldest first, and the snapshot built from them.
struct Registry {
    forms: VecDeque<Zeroizing<String>>,
    built: Option<Arc<Snapshot>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    forms: VecDeque::new(),
    built: None,
});

/// Bumped on every change of the registry; 0 while it is empty.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's copy of the newest snapshot and its generation.
    static CACHED: RefCell<Option<(u64, Arc<Snapshot>)>> = const { RefCell::new(None) };
}

/// The forms as one matcher (the only copy besides the registry's: no second set of
/// secrets to answer "already known").
struct Snapshot {
    matcher: Option<AhoCorasick>,
    count: usize,
}

impl Snapshot {
    /// Whether `form` is registered (ASCII case ignored, as redaction ignores it).
    fn knows(&self, form: &str) -> bool {
        self.matcher.as_ref().is_some_and(|m| {
            m.find(Input::new(form).anchored(Anchored::Yes))
                .is_some_and(|found| found.end() == form.len())
        })
    }

    fn spans(&self, hay: &[u8]) -> Vec<(usize, usize)> {
        self.matcher.as_ref().map_or_else(Vec::new, |m| {
            m.find_iter(hay).map(|m| (m.start(), m.end())).collect()
        })
    }
}

/// The current snapshot, `None` while nothing is registered.
fn snapshot() -> Option<Arc<Snapshot>> {
    let generation = GENERATION.load(Ordering::Acquire);
    if generation == 0 {
        return None;
    }
    let cached = CACHED.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, s)| Arc::clone(s))
    });
    if cached.is_some() {
        return cached;
    }
    let built = {
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = GENERATION.load(Ordering::Acquire);
        let snapshot = match &registry.built {
            Some(built) => Arc::clone(built),
            None => {
                let built = Arc::new(build(&registry.forms));
                registry.built = Some(Arc::clone(&built));
                built
            }
        };
        (generation, snapshot)
    };
    CACHED.with(|c| *c.borrow_mut() = Some((built.0, Arc::clone(&built.1))));
    Some(built.1)
}

fn build(forms: &VecDeque<Zeroizing<String>>) -> Snapshot {
    // Longest first among matches that start together: a secret that contains another
    // goes whole.
    let matcher = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostLongest)
        .start_kind(StartKind::Both)
        .build(forms.iter().map(|f| f.as_bytes()))
        .ok();
    Snapshot {
        matcher,
        count: forms.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Secrets;

    // The registry is the process's: each test uses values no other test uses.

    #[test]
    fn a_secret_is_known_everywhere_from_the_moment_it_exists() {
        let before = Secrets::none()
            .redact("known-1 tok-KNOWN-AAA111 x")
            .into_owned();
        assert!(before.contains("tok-KNOWN-AAA111"), "{before}");
        let secret = Secret::new("tok-KNOWN-AAA111");
        // A `Secrets` that was never given it, made before it existed, removes it.
        let shown = Secrets::none().shown("known-1 TOK-known-aaa111 x", 200);
        assert_eq!(shown, "known-1 [redacted] x");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
        assert_eq!(secret.expose(), "tok-KNOWN-AAA111");
        // Encoded spellings too.
        assert_eq!(
            Secrets::none().redact("?t=tok%2DKNOWN-AAA111&u=tok\\u002dKNOWN-AAA111"),
            "?t=[redacted]&u=[redacted]"
        );
        assert!(!Secrets::none().is_empty());
    }

    #[test]
    fn the_basic_forms_of_a_client_secret_are_known() {
        learn_basic("client one", "s3cret/KNOWN+basic");
        let plain = "client one:s3cret/KNOWN+basic";
        let encoded = "client+one:s3cret%2FKNOWN%2Bbasic";
        let b64 = |p: &str| base64::engine::general_purpose::STANDARD.encode(p);
        for echoed in [
            "s3cret/KNOWN+basic".to_owned(),
            plain.to_owned(),
            encoded.to_owned(),
            format!("Basic {}", b64(plain)),
            format!("Basic {}", b64(encoded)),
        ] {
            let shown = Secrets::none().redact(&echoed).into_owned();
            assert!(
                !shown.contains("KNOWN") && !shown.contains(&b64(encoded)[..12]),
                "{shown}"
            );
        }
    }

    #[test]
    fn short_values_are_not_known_process_wide() {
        learn("ab1");
        assert_eq!(Secrets::none().redact("x ab1 y"), "x ab1 y");
        // A call that holds one still removes it.
        assert_eq!(Secrets::new(["ab1"]).redact("x ab1 y"), "x [redacted] y");
    }

    #[test]
    fn a_secret_that_contains_another_goes_whole_and_learning_twice_is_once() {
        learn("inner-KNOWN-77");
        learn("outer-inner-KNOWN-77-tail");
        let before = known_forms();
        learn("outer-inner-KNOWN-77-tail");
        learn("OUTER-inner-KNOWN-77-TAIL");
        assert!(known_forms() <= before, "a known form is not added again");
        assert_eq!(
            Secrets::none().redact("a outer-inner-KNOWN-77-tail b inner-KNOWN-77 c"),
            "a [redacted] b [redacted] c"
        );
    }

    #[test]
    fn learning_from_many_threads_is_seen_by_all() {
        let handles: Vec<_> = (0..4)
            .map(|i| std::thread::spawn(move || learn(&format!("thread-KNOWN-{i}-secret"))))
            .collect();
        for handle in handles {
            handle.join().expect("thread");
        }
        for i in 0..4 {
            let text = format!("v=thread-KNOWN-{i}-secret");
            assert_eq!(Secrets::none().redact(&text), "v=[redacted]");
        }
    }
}
