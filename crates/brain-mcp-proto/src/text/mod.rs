//! Helpers for text that came from a peer and is shown to people, models or terminals.
//!
//! A server is not trusted: the strings it sends (error messages, challenges, tool names,
//! whole result bodies) may be huge, may carry terminal escape sequences, may echo the
//! bearer token back, and may not even be valid JSON text. These helpers bound, escape,
//! redact and repair such text. None of them allocates unless it changes something.
//!
//! - [`cut`]: at most N bytes, cut on a character boundary and marked as cut.
//! - [`terminal_safe`]: control characters escaped, so one message stays one line.
//! - [`redact`]: every occurrence of a secret (also percent-encoded or JSON-escaped,
//!   wholly or in part) replaced; [`redact_value`] and [`redact_json`] do it on decoded
//!   JSON strings.
//! - [`Secret`]: a secret value, registered with the process's redaction step from the
//!   moment it exists ([`learn`] and [`learn_basic`] register values held in other types).
//! - [`Secrets`]: every secret of a call in one value, plus every secret the process knows; [`Secrets::shown`] is the one step
//!   a peer's text takes before it is shown anywhere (redacted, terminal-safe, bounded).
//! - [`marks`]: one walk over JSON text outside its strings, for scans that read its
//!   structure without parsing it (members, depth, keys).
//! - [`repair_lone_surrogates`]: `\uD83D`-style escapes without their other half turned
//!   into U+FFFD, so a result cut inside an emoji still decodes.

mod cut;
mod known;
pub mod marks;
mod redact;
mod secrets;
mod surrogate;
mod terminal;

pub use cut::{CUT_MARK, cut, prefix};

/// The most bytes of one peer-supplied string (an error message, a challenge, a name) that
/// goes into a message of ours; longer ones are [`cut`]. Whole messages have their own,
/// larger bound where they are made.
pub const FRAGMENT_LIMIT: usize = 1024;
pub use known::{
    MAX_BYTES, MAX_FORMS, MIN_FORM, MIN_ISSUED, PIECE, Secret, credential_like, known_forms, learn,
    learn_basic, learn_basic_issued, learn_issued, learn_jwt, learn_per_request,
};
pub use redact::{REDACTED, redact, redact_json, redact_value};
pub use secrets::Secrets;
pub use surrogate::repair_lone_surrogates;
pub use terminal::{json_safe, terminal_safe};
