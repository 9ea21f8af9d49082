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
use std::collections::{BTreeSet, VecDeque};
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
    // Visible ASCII is below 128: one bit per byte value seen.
    let seen = bytes
        .iter()
        .fold(0u128, |seen, b| seen | 1u128 << (b & 0x7f));
    bytes.len() >= MIN_ISSUED
        && bytes.iter().all(u8::is_ascii_graphic)
        && seen.count_ones() >= 8
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

/// The registry: the three buckets, a hash of every form (ASCII case folded) for "already
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
#[path = "tests/known.rs"]
mod tests;
