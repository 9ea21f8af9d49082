//! The two rules a URL is read by. Both cut it with [`Split`] and read its host and port
//! with [`host_and_port`]; they differ in what else they ask (see the module docs).

use super::error::{MAX_URL_LEN, UrlError};
use super::host::host_and_port;
use super::split::Split;

/// What a rule reads from a URL it accepts.
pub(super) struct Parts {
    pub(super) split: Split,
    /// The host, lower-cased; an IPv6 literal keeps its brackets.
    pub(super) host: String,
    /// The port as written, if one was.
    pub(super) port: Option<u16>,
}

/// The endpoint rule: RFC 3986 read strictly, every check in the order its errors are
/// reported.
pub(super) fn endpoint(url: &str) -> Result<Parts, UrlError> {
    if url.len() > MAX_URL_LEN {
        return Err(UrlError::TooLong);
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::Whitespace);
    }
    let split = Split::http(url)?;
    let authority = &url[split.authority..split.path];
    if authority.contains('@') {
        return Err(UrlError::Credentials);
    }
    if !url.is_ascii() {
        return Err(if authority.is_ascii() {
            UrlError::NotAscii
        } else {
            UrlError::NotAsciiHost
        });
    }
    if split.fragment < url.len() {
        return Err(UrlError::Fragment);
    }
    let (host, port) = host_and_port(authority, true)?;
    check_tail(&url[split.path..])?;
    Ok(Parts {
        split,
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// The lenient rule: `http` or `https`, a host, no user info, a valid port. The path,
/// query and fragment are taken as they are.
pub(super) fn lenient(url: &str) -> Result<Parts, UrlError> {
    let split = Split::http(url)?;
    let authority = &url[split.authority..split.path];
    if authority.contains('@') {
        return Err(UrlError::Credentials);
    }
    let (host, port) = host_and_port(authority, false)?;
    Ok(Parts {
        split,
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// The path and query: only characters a URL carries unencoded, and `%` only as the start
/// of a `%XX` escape.
fn check_tail(tail: &str) -> Result<(), UrlError> {
    let bytes = tail.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return Err(UrlError::BadEscape);
            }
            i += 3;
            continue;
        }
        let allowed = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b);
        if !allowed {
            return Err(UrlError::MustEncode(char::from(b)));
        }
        i += 1;
    }
    Ok(())
}
