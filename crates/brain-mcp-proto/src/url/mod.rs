//! The one URL type of the workspace, without a URL library: an absolute `http` or
//! `https` URL, cut once and checked by one of two rules, with its origin,
//! host and port read at parse time and references resolved against it.
//!
//! # Two rules
//!
//! - [`Url::parse`], the **endpoint rule**, for URLs an operator configures (the host
//!   config, `mcp-tools`, a configured issuer): RFC 3986 read strictly, so what it accepts
//!   is exactly what the HTTP layer can send to. `http` or `https`, a host that is an
//!   IP address or a name TLS accepts, a port of 1 to 65535, a path and query made only of
//!   characters a URL carries unencoded and `%XX` escapes, no user information, no
//!   fragment, at most [`MAX_URL_LEN`] bytes. Anything a stricter HTTP library would refuse
//!   at call time is refused here, at load, with the reason.
//! - [`Url::parse_lenient`], the **lenient rule**, for URLs a peer names (authorization
//!   metadata, a redirect's target) and for comparing URLs: `http` or `https`, a host, no
//!   user information, a port of 1 to 65535 if one is written; the host's characters, the
//!   path, the query and a fragment are taken as they are, and the length is not bounded.
//!
//! They differ on purpose. A configured URL is checked once, by a person who can fix it,
//! so every doubt is an error at load. A peer's URL is not the operator's to fix, and what
//! it may be used for is decided by the check of its use, not by its spelling: OAuth's
//! `check_endpoint` refuses unsafe characters and plain `http`, the destination rule
//! refuses the addresses a name resolves to, and a redirect's target is parsed again by
//! the HTTP layer. Authorization compares URLs without their query and fragment (a
//! metadata URL keeps neither), so the lenient rule must read a URL that has them.
//!
//! Neither rule accepts user information: credentials in a URL end up in logs.

mod check;
mod error;
mod host;
mod origin;
mod resolve;
mod split;
#[cfg(test)]
mod tests;

use core::fmt;
use std::sync::Arc;

pub use error::{MAX_URL_LEN, UrlError};
pub use origin::origin_of;
pub use resolve::MAX_LOCATION;

use check::Parts;
use split::Split;

/// A checked absolute `http` or `https` URL. The text is kept as written; [`Self::origin`]
/// is what messages show, and all that `Debug` shows: the path and the query may hold
/// keys.
#[derive(Clone, PartialEq, Eq)]
pub struct Url {
    text: String,
    split: Split,
    /// `scheme://host[:port]`, lower-cased, the port as written.
    origin: String,
    /// The host, lower-cased, without an IPv6 literal's brackets; shared, since every
    /// call's telemetry names it.
    host: Arc<str>,
    /// The port, given or the scheme's.
    port: u16,
}

impl Url {
    /// Checks `url` against the endpoint rule (see the module docs). The error is one line
    /// saying what is wrong, without repeating the URL.
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        check::endpoint(url).map(|parts| Self::new(url.to_owned(), parts))
    }

    /// Checks `url` against the lenient rule, for a URL a peer named or one only compared
    /// (see the module docs).
    pub fn parse_lenient(url: &str) -> Result<Self, UrlError> {
        check::lenient(url).map(|parts| Self::new(url.to_owned(), parts))
    }

    fn new(text: String, parts: Parts) -> Self {
        let Parts { split, host, port } = parts;
        let origin = origin::format(split.https, &host, port);
        let default = if split.https { 443 } else { 80 };
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        Self {
            origin,
            host: Arc::from(bare),
            port: port.unwrap_or(default),
            split,
            text,
        }
    }

    /// The host, lower-cased (an IPv6 literal without its brackets), shared.
    pub fn host(&self) -> &Arc<str> {
        &self.host
    }

    /// The port: the one given, else 443 for `https` and 80 for `http`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the port is the scheme's own (443 for `https`, 80 for `http`), written or
    /// not.
    pub fn is_default_port(&self) -> bool {
        self.port == if self.split.https { 443 } else { 80 }
    }

    /// The URL as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `scheme://host[:port]`, lower-cased, the port as written, for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &'static str {
        if self.split.https { "https" } else { "http" }
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.split.https
    }

    /// The path as written: empty, or starting with `/`.
    pub fn path(&self) -> &str {
        &self.text[self.split.path..self.split.query]
    }

    /// The query as written, without its `?`, if there is one.
    pub fn query(&self) -> Option<&str> {
        self.text[self.split.query..self.split.fragment].strip_prefix('?')
    }

    /// Whether the URL has a fragment (only the lenient rule accepts one).
    pub fn has_fragment(&self) -> bool {
        self.split.fragment < self.text.len()
    }

    /// Whether `other` has the same origin: the same scheme, host (case aside) and port
    /// (a default port written or not).
    pub fn same_origin(&self, other: &Self) -> bool {
        self.split.https == other.split.https && self.host == other.host && self.port == other.port
    }

    /// Where `reference` (a redirect's `Location`, say) leads from this URL, resolved as
    /// RFC 3986 §5.2 says: absolute, network-path (`//host`), absolute-path, query-only
    /// and relative-path references, dot segments removed in linear time, any fragment
    /// dropped. `None` for an empty reference, one over [`MAX_LOCATION`] bytes, or one
    /// whose target the lenient rule refuses (another scheme, no host, user information).
    pub fn resolve(&self, reference: &str) -> Option<Self> {
        let authority = &self.text[self.split.authority..self.split.path];
        let text = resolve::resolve(self.scheme(), authority, self.path(), reference)?;
        Self::parse_lenient(&text).ok()
    }
}

impl fmt::Debug for Url {
    /// Shows the origin only: the path and query may hold keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Url").field(&self.origin).finish()
    }
}
