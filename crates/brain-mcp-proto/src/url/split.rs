//! The one place a URL's text is cut into its parts: `scheme://authority`, then the path,
//! the query and the fragment. Both rules and reference resolution read a URL through it.

use super::error::UrlError;

/// Where the parts of an absolute `http` or `https` URL lie in its text. The authority
/// runs to the first `/`, `?` or `#`; the path to the first `?` or `#`; the query (its
/// `?` included) to the first `#`; the fragment (its `#` included) to the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Split {
    /// The scheme is `https` (else `http`).
    pub(super) https: bool,
    /// The first byte of the authority (after `://`).
    pub(super) authority: usize,
    /// The first byte of the path (the end of the authority).
    pub(super) path: usize,
    /// The first byte of the query, its `?` (the end of the path).
    pub(super) query: usize,
    /// The first byte of the fragment, its `#` (the end of the query).
    pub(super) fragment: usize,
}

impl Split {
    /// Cuts `url`; refuses anything but `http://` or `https://` (any case). Checks
    /// nothing else: the rules do.
    pub(super) fn http(url: &str) -> Result<Self, UrlError> {
        let (scheme, authority) = scheme_and_rest(url).ok_or(UrlError::NotHttp)?;
        let https = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err(UrlError::NotHttp);
        };
        let (path, query, fragment) = ends(url, authority);
        Ok(Self {
            https,
            authority,
            path,
            query,
            fragment,
        })
    }
}

/// The text before the first `://` and where what follows it starts.
pub(super) fn scheme_and_rest(url: &str) -> Option<(&str, usize)> {
    let sep = url.find("://")?;
    Some((&url[..sep], sep + 3))
}

/// Where the authority starting at `authority` ends, then the path, then the query.
pub(super) fn ends(url: &str, authority: usize) -> (usize, usize, usize) {
    let from = |start: usize, stops: &[char]| {
        url[start..]
            .find(stops)
            .map_or(url.len(), |offset| start + offset)
    };
    let path = from(authority, &['/', '?', '#']);
    let query = from(path, &['?', '#']);
    let fragment = from(query, &['#']);
    (path, query, fragment)
}

/// Whether `scheme` is one by RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` or
/// `.`.
pub(super) fn is_scheme(scheme: &str) -> bool {
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}
