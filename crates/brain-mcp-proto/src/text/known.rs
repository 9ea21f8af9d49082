//! Every secret this process holds or held, known to the redaction step from the moment
//! it exists.
//!
//! A secret used to be a string some code had to remember to add to a call's list, in
//! each spelling a peer could echo, at the right moment; the newest surface forgot. Here
//! a secret is a type: making a [`Secret`] (or calling [`learn`], [`learn_basic`] or
//! [`learn_jwt`] where a value arrives in another type) registers each of its forms with
//! this process's registry, and [`Secrets`](super::Secrets) consults the registry on
//! every redaction, so text shown anywhere is cleared of every secret the process knows,
//! whichever call it belongs to, before and after a token is first got or renewed.
//!
//! Three buckets, so that a peer cannot push out what the host holds:
//! - **the host's** ([`learn`]): what the host is configured with or given (client
//!   secrets and their Basic forms, keys, static and tenant tokens, proxy credentials,
//!   header values);
//! - **per request** ([`learn_per_request`], [`learn_jwt`]): what the host makes for one
//!   token request (assertions, PKCE verifiers). A peer decides how many token requests
//!   there are, so these have a bucket of their own;
//! - **issued** ([`learn_issued`]): what a peer hands the host (access and refresh tokens,
//!   codes, registered client secrets). A peer chooses these values, so only one that
//!   looks like a credential is kept ([`credential_like`]): a value such as `required` or
//!   six spaces would otherwise blank every other server's output.
//!
//! Bounds: each bucket keeps at most [`MAX_FORMS`] forms and [`MAX_BYTES`] bytes, the
//! oldest forgotten first; a form longer than [`PIECE`] bytes is kept as consecutive
//! pieces (an echo of the whole is still removed whole); forms shorter than [`MIN_FORM`]
//! bytes are not kept process-wide. A call's own secrets are also carried in its
//! [`Secrets`](super::Secrets), so they are removed from its own text whatever the
//! registry forgot.
//!
//! The registry is read through a snapshot shared between threads, rebuilt (outside the
//! lock) only when a form arrives: a redaction with nothing registered costs one atomic
//! load, and one with forms costs one pass over the text whatever their number
//! (Aho-Corasick, ASCII case ignored, overlapping matches merged).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use zeroize::Zeroizing;

/// The most forms each bucket keeps.
pub const MAX_FORMS: usize = 1024;
/// The most bytes of forms each bucket keeps.
pub const MAX_BYTES: usize = 128 * 1024;
/// The shortest form registered process-wide, in bytes.
pub const MIN_FORM: usize = 6;
/// Forms longer than this are kept as pieces of this many bytes.
pub const PIECE: usize = 1024;
/// The shortest value a peer issues that is kept process-wide, in bytes.
pub const MIN_ISSUED: usize = 16;

/// A secret value: a bearer or access token, a refresh token, a client secret, a private
/// key, a signed assertion, an authorization code, a PKCE verifier, a proxy credential, a
/// header value marked secret.
///
/// Making one registers it with the process's redaction step (in the host's bucket)
/// before any byte of it can be sent. It has no `Display`; its `Debug` prints
/// `Secret(***)`; its memory is zeroed when the last clone drops. Only
/// [`Secret::expose`] reads it, at the one place that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<Zeroizing<String>>);

impl Secret {
    /// A secret the host made or was configured with, registered (see the module docs).
    pub fn new(value: impl Into<String>) -> Self {
        let value = Zeroizing::new(value.into());
        learn(&value);
        Self(Arc::new(value))
    }

    /// A secret a peer issued (a token, a code), registered only if it looks like a
    /// credential ([`learn_issued`]).
    pub fn issued(value: impl Into<String>) -> Self {
        let value = Zeroizing::new(value.into());
        learn_issued(&value);
        Self(Arc::new(value))
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for Secret {
    /// A JSON string a peer sent, made a secret as it is read: kept process-wide only
    /// if it looks like a credential ([`learn_issued`]).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Zeroizing::new(String::deserialize(deserializer)?);
        learn_issued(&value);
        Ok(Self(Arc::new(value)))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Registers `value`, one form the host made or was configured with. Cheap when it is
/// already known.
pub fn learn(value: &str) {
    learn_all(Bucket::Host, [value]);
}

/// Registers `value`, one form the host made for one token request (a PKCE verifier),
/// in the per-request bucket.
pub fn learn_per_request(value: &str) {
    learn_all(Bucket::PerRequest, [value]);
}

/// Registers `value`, one form a peer issued, if it looks like a credential
/// ([`credential_like`]); else it stays in its call's own secrets only.
pub fn learn_issued(value: &str) {
    if credential_like(value) {
        learn_all(Bucket::Issued, [value]);
    }
}

/// Whether a value a peer chose looks like a credential, so that keeping it
/// process-wide cannot blank ordinary text: at least [`MIN_ISSUED`] bytes of visible
/// ASCII (no space), at least 8 distinct bytes, and not letters alone.
pub fn credential_like(value: &str) -> bool {
    let bytes = value.as_bytes();
    let distinct: HashSet<u8> = bytes.iter().copied().collect();
    bytes.len() >= MIN_ISSUED
        && bytes.iter().all(u8::is_ascii_graphic)
        && distinct.len() >= 8
        && !bytes.iter().all(u8::is_ascii_alphabetic)
}

/// Registers the forms a client's secret takes in an HTTP Basic `Authorization` header
/// (RFC 6749 §2.3.1) and in a form body: the secret, form-encoded; `id:secret` as written
/// and with both parts form-encoded; the base64 of each pair, standard and URL-safe,
/// without padding (so a padded echo is found too). A peer that echoes the header or the
/// body it received then shows none of them.
pub fn learn_basic(client_id: &str, secret: &str) {
    learn_basic_in(Bucket::Host, client_id, secret);
}

/// [`learn_basic`] for a client secret a peer issued (a registration's answer): kept
/// only if the secret looks like a credential ([`credential_like`]).
pub fn learn_basic_issued(client_id: &str, secret: &str) {
    if credential_like(secret) {
        learn_basic_in(Bucket::Issued, client_id, secret);
    }
}

fn learn_basic_in(bucket: Bucket, client_id: &str, secret: &str) {
    let encoded_secret = Zeroizing::new(crate::auth::token::encode(secret));
    let plain = Zeroizing::new(format!("{client_id}:{secret}"));
    let encoded = Zeroizing::new(format!(
        "{}:{}",
        crate::auth::token::encode(client_id),
        encoded_secret.as_str()
    ));
    let b64 = |pair: &str| {
        [
            Zeroizing::new(STANDARD_NO_PAD.encode(pair)),
            Zeroizing::new(URL_SAFE_NO_PAD.encode(pair)),
        ]
    };
    let [plain_b64, plain_url] = b64(&plain);
    let [encoded_b64, encoded_url] = b64(&encoded);
    learn_all(
        bucket,
        [
            secret,
            encoded_secret.as_str(),
            plain.as_str(),
            encoded.as_str(),
            plain_b64.as_str(),
            plain_url.as_str(),
            encoded_b64.as_str(),
            encoded_url.as_str(),
        ],
    );
}

/// Registers a signed JWT the host made for one token request (a client assertion), in
/// the per-request bucket: whole, and its payload and signature each (its header is the
/// same for every assertion, so not a secret).
pub fn learn_jwt(jwt: &str) {
    let mut parts = jwt.split('.');
    let _header = parts.next();
    let rest: Vec<&str> = parts.collect();
    learn_all(Bucket::PerRequest, std::iter::once(jwt).chain(rest));
}

/// The three buckets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bucket {
    Host,
    PerRequest,
    Issued,
}

/// Registers each of `forms` in `bucket`.
fn learn_all<'a>(bucket: Bucket, forms: impl IntoIterator<Item = &'a str>) {
    // Known already, by this thread's current snapshot: no lock (a static token is
    // wrapped on every call). Learning never builds a snapshot itself.
    let cached = cached_snapshot();
    let mut fresh: Vec<&str> = Vec::new();
    for form in forms {
        for piece in pieces(form) {
            if piece.len() >= MIN_FORM && cached.as_ref().is_none_or(|s| !s.knows(piece)) {
                fresh.push(piece);
            }
        }
    }
    if fresh.is_empty() {
        return;
    }
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let mut added = false;
    for form in fresh {
        let hash = fold_hash(form);
        if registry.hashes.contains(&hash) {
            continue;
        }
        registry.hashes.insert(hash);
        let forgotten = registry.bucket(bucket).push(form);
        for old in forgotten {
            registry.hashes.remove(&fold_hash(&old));
        }
        added = true;
    }
    if added {
        registry.generation += 1;
        GENERATION.store(registry.generation, Ordering::Release);
    }
}

/// `form` whole when it is short, else consecutive pieces of [`PIECE`] bytes, the last
/// one ending where the form ends (on character boundaries).
fn pieces(form: &str) -> Vec<&str> {
    if form.len() <= PIECE {
        return vec![form];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < form.len() {
        let mut end = (start + PIECE).min(form.len());
        while !form.is_char_boundary(end) {
            end -= 1;
        }
        if end == form.len() && end - start < PIECE {
            let mut tail = form.len().saturating_sub(PIECE);
            while !form.is_char_boundary(tail) {
                tail += 1;
            }
            out.push(&form[tail..]);
            break;
        }
        out.push(&form[start..end]);
        start = end;
    }
    out
}

/// A hash of `form` with ASCII case folded, as matching ignores it.
fn fold_hash(form: &str) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(form.to_ascii_lowercase())
}

/// Whether the process knows no secret.
pub(super) fn is_empty() -> bool {
    GENERATION.load(Ordering::Acquire) == 0
}

/// This thread's snapshot, if it is of the current generation.
fn cached_snapshot() -> Option<Arc<Snapshot>> {
    let generation = GENERATION.load(Ordering::Acquire);
    if generation == 0 {
        return None;
    }
    CACHED
        .try_with(|c| {
            c.borrow()
                .as_ref()
                .filter(|(g, _)| *g == generation)
                .map(|(_, s)| Arc::clone(s))
        })
        .ok()
        .flatten()
}

/// The registry as one matcher, or `None` while nothing is registered.
pub(super) fn snapshot() -> Option<Arc<Snapshot>> {
    if is_empty() {
        return None;
    }
    if let Some(cached) = cached_snapshot() {
        return Some(cached);
    }
    let built = shared_snapshot();
    let _ = CACHED.try_with(|c| *c.borrow_mut() = Some((built.generation, Arc::clone(&built))));
    Some(built)
}

/// The newest snapshot, built outside the registry's lock when it is missing.
fn shared_snapshot() -> Arc<Snapshot> {
    let (generation, forms) = {
        let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(built) = registry
            .built
            .as_ref()
            .filter(|b| b.generation == registry.generation)
        {
            return Arc::clone(built);
        }
        (registry.generation, registry.forms())
    };
    let built = Arc::new(Snapshot::build(generation, forms));
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if registry.generation == generation {
        registry.built = Some(Arc::clone(&built));
    }
    built
}

/// How many forms the process knows.
pub fn known_forms() -> usize {
    snapshot().map_or(0, |s| s.forms.len())
}

/// One bucket: its forms, oldest first, and their bytes.
#[derive(Default)]
struct Forms {
    list: VecDeque<Zeroizing<String>>,
    bytes: usize,
}

impl Forms {
    /// Adds `form`; returns the forms forgotten to make room.
    fn push(&mut self, form: &str) -> Vec<Zeroizing<String>> {
        let mut forgotten = Vec::new();
        while !self.list.is_empty()
            && (self.list.len() >= MAX_FORMS || self.bytes + form.len() > MAX_BYTES)
        {
            if let Some(old) = self.list.pop_front() {
                self.bytes -= old.len();
                forgotten.push(old);
            }
        }
        self.bytes += form.len();
        self.list.push_back(Zeroizing::new(form.to_owned()));
        forgotten
    }
}

/// The registry: both buckets, a hash of every form (ASCII case folded) for "already
/// known", and the snapshot last built.
struct Registry {
    host: Forms,
    per_request: Forms,
    issued: Forms,
    hashes: BTreeSet<u64>,
    generation: u64,
    built: Option<Arc<Snapshot>>,
}

impl Registry {
    fn bucket(&mut self, bucket: Bucket) -> &mut Forms {
        match bucket {
            Bucket::Host => &mut self.host,
            Bucket::PerRequest => &mut self.per_request,
            Bucket::Issued => &mut self.issued,
        }
    }

    fn forms(&self) -> Vec<Zeroizing<String>> {
        let all = self.host.list.iter().chain(&self.per_request.list);
        all.chain(&self.issued.list).cloned().collect()
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    host: Forms {
        list: VecDeque::new(),
        bytes: 0,
    },
    per_request: Forms {
        list: VecDeque::new(),
        bytes: 0,
    },
    issued: Forms {
        list: VecDeque::new(),
        bytes: 0,
    },
    hashes: BTreeSet::new(),
    generation: 0,
    built: None,
});

/// Bumped on every change of the registry; 0 while it is empty.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's copy of the newest snapshot and its generation.
    static CACHED: RefCell<Option<(u64, Arc<Snapshot>)>> = const { RefCell::new(None) };
}

/// The registry at one generation: its forms as one matcher, their hashes for "already
/// known", and the forms themselves for "is this inside a secret".
pub(super) struct Snapshot {
    generation: u64,
    matcher: Option<AhoCorasick>,
    forms: Vec<Zeroizing<String>>,
    /// The forms with ASCII case folded, for [`Self::inside_a_secret`].
    folded: Vec<Zeroizing<String>>,
    hashes: BTreeSet<u64>,
}

impl Snapshot {
    fn build(generation: u64, forms: Vec<Zeroizing<String>>) -> Self {
        // Every match, overlapping ones included: the spans are merged, so one secret
        // that starts inside another cannot hide the rest of it.
        let matcher = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(forms.iter().map(|f| f.as_bytes()))
            .ok();
        let hashes = forms.iter().map(|f| fold_hash(f)).collect();
        let folded = forms
            .iter()
            .map(|f| Zeroizing::new(f.to_ascii_lowercase()))
            .collect();
        Self {
            generation,
            matcher,
            forms,
            folded,
            hashes,
        }
    }

    /// Whether `form` is registered (ASCII case ignored, as redaction ignores it).
    fn knows(&self, form: &str) -> bool {
        self.hashes.contains(&fold_hash(form))
    }

    /// The spans of every known secret in `hay`, merged, in order.
    pub(super) fn spans(&self, hay: &[u8]) -> Vec<(usize, usize)> {
        match &self.matcher {
            Some(m) => merge_in_order(m.find_overlapping_iter(hay).map(|m| (m.start(), m.end()))),
            // Built from forms that were all valid: not reached; if it were, nothing
            // would be removed, so fall back to one search per form.
            None => super::redact::merge(
                self.forms
                    .iter()
                    .flat_map(|f| {
                        super::redact::find_all(hay, f.as_bytes())
                            .into_iter()
                            .map(|s| (s, s + f.len()))
                    })
                    .collect(),
            ),
        }
    }

    /// Whether `piece` (ASCII case ignored) lies inside a known secret.
    pub(super) fn inside_a_secret(&self, piece: &str) -> bool {
        let piece = piece.to_ascii_lowercase();
        self.folded.iter().any(|f| f.contains(&piece))
    }
}

/// Overlapping matches as the matcher reports them (ordered by where they end) merged as
/// they come, so their number in memory is bounded by the disjoint spans, not by how
/// many secrets overlap at each byte.
fn merge_in_order(matches: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (start, end) in matches {
        // A match that starts before spans already kept covers them (it ends later).
        while out.last().is_some_and(|last| start <= last.0) {
            out.pop();
        }
        match out.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
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
        learn("outer-inner-KNOWN-77-tail");
        learn("OUTER-inner-KNOWN-77-TAIL");
        let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let copies = registry
            .host
            .list
            .iter()
            .filter(|f| f.eq_ignore_ascii_case("outer-inner-KNOWN-77-tail"))
            .count();
        assert_eq!(copies, 1, "a known form is not added again");
        drop(registry);
        assert_eq!(
            Secrets::none().redact("a outer-inner-KNOWN-77-tail b inner-KNOWN-77 c"),
            "a [redacted] b [redacted] c"
        );
    }

    #[test]
    fn a_value_a_peer_chose_is_kept_only_when_it_looks_like_a_credential() {
        for word in [
            "properties",
            "      ",
            "maxLength",
            "additionalProperties",
            "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
            "aaaaaaaaaaaaaaaaaaaa1",
        ] {
            learn_issued(word);
            let text = format!("x {word} y");
            assert_eq!(Secrets::none().redact(&text), text, "{word:?}");
        }
        learn_issued("at-ISSUED-7f3e9a1c2b");
        assert_eq!(
            Secrets::none().redact("x at-ISSUED-7f3e9a1c2b y"),
            "x [redacted] y"
        );
        // Through serde, as a token response is read.
        let token: Secret = serde_json::from_str(r#""required""#).unwrap();
        assert_eq!(token.expose(), "required");
        assert_eq!(Secrets::none().redact("required"), "required");
    }

    #[test]
    fn one_secret_starting_inside_another_cannot_hide_its_rest() {
        learn("QQ-abcdef-PREFIX");
        learn("PREFIX-SECRET-tail-1");
        let shown = Secrets::none()
            .redact("QQ-abcdef-PREFIX-SECRET-tail-1 end")
            .into_owned();
        assert_eq!(shown, "[redacted] end");
        // A call's own secret overlapping a known one: merged too.
        let call = Secrets::new(["zz:OVERLAP-head"]);
        learn("OVERLAP-head-and-KNOWN-tail");
        let shown = call.redact("zz:OVERLAP-head-and-KNOWN-tail!").into_owned();
        assert_eq!(shown, "[redacted]!");
    }

    #[test]
    fn a_long_secret_is_kept_in_pieces_and_removed_whole() {
        let long: String = (0..5000)
            .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
            .collect();
        let long = format!("LONG-{long}");
        learn(&long);
        // Five pieces, the last overlapping the fourth, merged into one span.
        let shown = Secrets::none().redact(&format!("<{long}>")).into_owned();
        assert_eq!(shown, "<[redacted]>");
        // A part of it as long as a piece is removed too.
        let part = &long[1000..2100];
        assert!(!Secrets::none().redact(part).contains(&part[100..140]));
    }

    #[test]
    fn the_registry_stays_within_its_bytes() {
        for i in 0..600 {
            learn_issued(&format!("bulk-{i:04}-{}", "Zq9".repeat(100)));
        }
        let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            registry.issued.bytes <= MAX_BYTES,
            "{}",
            registry.issued.bytes
        );
        assert!(registry.issued.list.len() <= MAX_FORMS);
        assert!(registry.host.bytes <= MAX_BYTES);
        assert!(registry.per_request.bytes <= MAX_BYTES);
        // A peer's values never push out the host's.
        drop(registry);
        learn("host-KEPT-secret-1");
        for i in 0..600 {
            learn_issued(&format!("more-{i:04}-{}", "Xy7".repeat(100)));
        }
        assert_eq!(Secrets::none().redact("host-KEPT-secret-1"), "[redacted]");
    }

    #[test]
    fn jwt_segments_and_unpadded_base64_are_known() {
        learn_jwt("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJKV1RURVNUIn0.c2lnbmF0dXJlLUpXVFRFU1Q");
        assert_eq!(
            Secrets::none().redact("p=eyJpc3MiOiJKV1RURVNUIn0 s=c2lnbmF0dXJlLUpXVFRFU1Q"),
            "p=[redacted] s=[redacted]"
        );
        learn_basic("id-b64", "pad-TEST-secret");
        let pair = "id-b64:pad-TEST-secret";
        for echoed in [
            base64::engine::general_purpose::STANDARD.encode(pair),
            STANDARD_NO_PAD.encode(pair),
            URL_SAFE_NO_PAD.encode(pair),
        ] {
            assert!(
                !Secrets::none().redact(&echoed).contains(&echoed[..10]),
                "{echoed}"
            );
        }
        // The form-encoded secret alone, as a client_secret_post body carries it.
        learn_basic("id-post", "a b&c/d-POST-secret");
        assert_eq!(
            Secrets::none().redact("client_secret=a+b%26c%2Fd-POST-secret&x=1"),
            "client_secret=[redacted]&x=1"
        );
    }

    #[test]
    fn a_session_id_that_is_the_start_of_a_secret_shows_nothing() {
        learn("tok-PREFIXID-0123456789abcdef");
        assert_eq!(
            Secrets::none().short_id("tok-PREFIXID-0123", 8),
            crate::text::REDACTED
        );
        assert_eq!(
            Secrets::none().short_id("sess-unrelated-99", 8),
            "sess-unr…"
        );
    }

    #[test]
    fn assertions_by_the_hundred_never_push_out_what_the_host_holds() {
        learn("host-KEPT-configured-2");
        for i in 0..400 {
            let (pay, sig) = ("Qw3".repeat(40), "Ex9".repeat(20));
            learn_jwt(&format!(
                "eyJhbGciOiJFUzI1NiJ9.pay{i:04}{pay}.sig{i:04}{sig}"
            ));
            learn_per_request(&format!("verifier-{i:04}-{}", "Rt5".repeat(10)));
        }
        assert_eq!(
            Secrets::none().redact("host-KEPT-configured-2"),
            "[redacted]"
        );
    }

    #[test]
    fn many_overlapping_secrets_merge_as_they_are_found() {
        let unit = "Ab1-Cd2-Ef3-Gh4-";
        let long = unit.repeat(12);
        // Suffixes of one another, each a credential to the registry.
        for len in (16..long.len()).step_by(8) {
            learn_issued(&long[long.len() - len..]);
        }
        let text = unit.repeat(2000);
        let shown = Secrets::none().redact(&text).into_owned();
        assert!(!shown.contains("Ab1-Cd2-Ef3-Gh4-Ab1"), "{}", &shown[..200]);
        let merged = merge_in_order([(0, 4), (2, 6), (0, 9), (10, 12), (11, 13)].into_iter());
        assert_eq!(merged, vec![(0, 9), (10, 13)]);
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
