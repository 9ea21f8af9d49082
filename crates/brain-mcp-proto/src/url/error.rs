//! Why a URL is refused, in one line that never repeats the URL.

/// The longest URL the endpoint rule accepts, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// Why a URL breaks a rule. `Display` is one line saying what is wrong ("must ...",
/// "has ..."), without repeating the URL, which may hold keys.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Longer than [`MAX_URL_LEN`].
    #[error("must be at most {MAX_URL_LEN} bytes")]
    TooLong,
    /// Whitespace or a control character.
    #[error("must not contain whitespace or control characters")]
    Whitespace,
    /// Not `http://` or `https://`.
    #[error("must be an http or https URL")]
    NotHttp,
    /// User info (`user:password@`). The advice names the host config's `token_env`,
    /// where a configured endpoint's credential belongs instead.
    #[error("must not contain credentials; use token_env")]
    Credentials,
    /// A non-ASCII character in the path or query.
    #[error("must be ASCII: percent-encode other characters in the path and query")]
    NotAscii,
    /// A non-ASCII host name.
    #[error("must have an ASCII host name: write an internationalized name in its xn-- form")]
    NotAsciiHost,
    /// A fragment (`#...`).
    #[error("must not have a fragment")]
    Fragment,
    /// No host.
    #[error("must have a host")]
    NoHost,
    /// A host that is neither a DNS name TLS accepts nor an IP address.
    #[error("must have a valid host")]
    BadHost,
    /// A port outside 1 to 65535, or not a number.
    #[error("must have a port between 1 and 65535")]
    BadPort,
    /// A `%` that does not start a `%XX` escape.
    #[error("has a % that does not start a %XX escape")]
    BadEscape,
    /// A character that must be percent-encoded.
    #[error("has a character that must be percent-encoded: {0:?}")]
    MustEncode(char),
}
