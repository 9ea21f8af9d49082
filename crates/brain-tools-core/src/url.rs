//! The one rule for an endpoint URL, shared by the config loader, discovery and the call
//! path: what it accepts is exactly what the HTTP layer can send to.
//!
//! The rule is RFC 3986 read strictly: `http` or `https`, a host, an optional port, and a
//! path and query made only of the characters a URL may carry unencoded. Anything a
//! stricter HTTP library would refuse at call time (`"`, `<`, `>`, spaces, non-ASCII) is
//! refused here, at load, with the reason.

use std::fmt;
use std::net::Ipv6Addr;
use std::sync::Arc;

/// The longest URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// Why a URL breaks the rule. `Display` is one line saying what is wrong ("must ...",
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
    /// User info (`user:password@`).
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

/// A checked endpoint URL. The text is kept as written; [`Self::origin`] is what messages
/// show (never the path, the query or credentials, which may hold keys).
#[derive(Clone, PartialEq, Eq)]
pub struct EndpointUrl {
    text: String,
    origin: String,
    /// The host, lower-cased, without an IPv6 literal's brackets; shared, since every
    /// call's telemetry names it.
    host: Arc<str>,
    /// The port, given or the scheme's.
    port: u16,
}

impl EndpointUrl {
    /// Checks `url` against the rule. The error is one line saying what is wrong, without
    /// repeating the URL.
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let Checked { origin, host, port } = check(url)?;
        Ok(Self {
            text: url.to_owned(),
            origin,
            host: Arc::from(host),
            port,
        })
    }

    /// The host, lower-cased (an IPv6 literal without its brackets), shared.
    pub fn host(&self) -> &Arc<str> {
        &self.host
    }

    /// The port: the one given, else 443 for `https` and 80 for `http`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `scheme://host[:port]`, lower-cased, for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl fmt::Debug for EndpointUrl {
    /// Shows the origin only: the path and query may hold keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EndpointUrl").field(&self.origin).finish()
    }
}

/// What the rule reads from a URL it accepts.
struct Checked {
    origin: String,
    host: String,
    port: u16,
}

/// Checks `url`; returns its origin, host and port.
fn check(url: &str) -> Result<Checked, UrlError> {
    if url.len() > MAX_URL_LEN {
        return Err(UrlError::TooLong);
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::Whitespace);
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(UrlError::NotHttp);
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(UrlError::NotHttp);
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
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
    if tail.contains('#') {
        return Err(UrlError::Fragment);
    }
    let (host, port) = host_and_port(authority)?;
    check_tail(tail)?;
    let host = host.to_ascii_lowercase();
    let origin = match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    };
    let default = if scheme == "https" { 443 } else { 80 };
    Ok(Checked {
        origin,
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port: port.unwrap_or(default),
    })
}

/// Splits and checks `host[:port]`; the host keeps its brackets if it is an IPv6 literal.
fn host_and_port(authority: &str) -> Result<(&str, Option<u16>), UrlError> {
    if authority.is_empty() {
        return Err(UrlError::NoHost);
    }
    let (host, port) = if authority.starts_with('[') {
        let close = authority.find(']').ok_or(UrlError::BadHost)?;
        let (host, after) = authority.split_at(close + 1);
        if !after.is_empty() && !after.starts_with(':') {
            return Err(UrlError::BadHost);
        }
        let literal = &host[1..host.len() - 1];
        // Zone ids (`%25eth0`) are not sent over HTTP; only a plain address is accepted.
        if literal.parse::<Ipv6Addr>().is_err() {
            return Err(UrlError::BadHost);
        }
        (host, after.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(UrlError::NoHost);
    }
    if !host.starts_with('[') && !is_host_name(host) {
        return Err(UrlError::BadHost);
    }
    let port = match port {
        None => None,
        Some(text) => match text.parse::<u16>() {
            Ok(n @ 1..) if text.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(UrlError::BadPort),
        },
    };
    Ok((host, port))
}

/// An IPv4 address in dotted-quad form, or a DNS name that TLS accepts as a server name:
/// dot-separated labels of 1 to 63 letters, digits, `-` and `_`, none starting or ending
/// with `-`, 253 bytes at most, a final dot allowed, and a last label that is not a number
/// (decimal or `0x` hex): such a name reads as an IPv4 address in another form (`127.1`,
/// `0x7f.1`), which clients resolve differently and TLS refuses.
fn is_host_name(host: &str) -> bool {
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        return true;
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    let labels_ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    labels_ok && !name.rsplit('.').next().is_some_and(is_number)
}

/// Whether a label is a number as IPv4 parsers read one: decimal digits, or `0x` and
/// hex digits.
fn is_number(label: &str) -> bool {
    let hex = label
        .strip_prefix("0x")
        .or_else(|| label.strip_prefix("0X"));
    match hex {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_hexdigit()),
        None => label.bytes().all(|b| b.is_ascii_digit()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_and_port_are_read_once() {
        for (url, host, port) in [
            ("https://Example.com/mcp", "example.com", 443),
            ("http://example.com", "example.com", 80),
            ("http://127.0.0.1:8080/mcp", "127.0.0.1", 8080),
            ("HTTPS://[::1]:3000/mcp?x=1", "::1", 3000),
        ] {
            let parsed = EndpointUrl::parse(url).unwrap();
            assert_eq!(
                (parsed.host().as_ref(), parsed.port()),
                (host, port),
                "{url}"
            );
        }
    }

    #[test]
    fn accepted_urls_and_their_origins() {
        for (url, origin) in [
            ("https://example.com/mcp", "https://example.com"),
            ("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080"),
            ("HTTPS://Example.com", "https://example.com"),
            ("http://[::1]:3000/mcp?x=1", "http://[::1]:3000"),
            ("http://localhost", "http://localhost"),
            (
                "http://mcp_server.internal:80/a/b?k=v&x=%2F",
                "http://mcp_server.internal:80",
            ),
            (
                "https://xn--bcher-kva.example/mcp",
                "https://xn--bcher-kva.example",
            ),
            ("https://h/p?q=a:b@c/d?e", "https://h"),
            ("https://123.example/mcp", "https://123.example"),
            (
                "https://api.0xcafe.example/mcp",
                "https://api.0xcafe.example",
            ),
            ("http://10.0.0.1:9/mcp", "http://10.0.0.1:9"),
        ] {
            let parsed = EndpointUrl::parse(url).unwrap();
            assert_eq!(parsed.origin(), origin, "{url}");
            assert_eq!(parsed.as_str(), url);
        }
    }

    #[test]
    fn refused_urls_say_why_without_echoing_them() {
        let cases = [
            ("ftp://example.com", "must be an http or https URL"),
            ("example.com/mcp", "must be an http or https URL"),
            ("file:///etc/passwd", "must be an http or https URL"),
            ("https://", "must have a host"),
            ("https:///mcp", "must have a host"),
            (
                "https://u:p@example.com",
                "must not contain credentials; use token_env",
            ),
            (
                "http://user:pw@host/mcp?key=1",
                "must not contain credentials; use token_env",
            ),
            ("https://example.com/a#b", "must not have a fragment"),
            (
                "https://example.com:0/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:99999/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:x/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:+80/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://exa mple.com",
                "must not contain whitespace or control characters",
            ),
            ("https://exa<mple.com", "must have a valid host"),
            ("http://[zz]/", "must have a valid host"),
            ("http://[fe80::1%25eth0]/", "must have a valid host"),
            ("http://a..b/", "must have a valid host"),
            ("http://a%41b/", "must have a valid host"),
            // Names an IPv4 parser reads as an address in another form, or TLS refuses.
            ("https://127.1:8443/mcp", "must have a valid host"),
            ("https://10.1.2/mcp", "must have a valid host"),
            ("https://localhost.0x7f/mcp", "must have a valid host"),
            ("https://a.b.123/mcp", "must have a valid host"),
            ("https://x-.localhost/mcp", "must have a valid host"),
            ("https://-x.localhost/mcp", "must have a valid host"),
            ("http://256.1.1.1/mcp", "must have a valid host"),
            (
                "https://bücher.example/mcp",
                "must have an ASCII host name: write an internationalized name in its xn-- form",
            ),
            (
                "https://example.com/über",
                "must be ASCII: percent-encode other characters in the path and query",
            ),
            (
                "https://example.com/mcp?q=\"x\"",
                "has a character that must be percent-encoded: '\"'",
            ),
            (
                "https://example.com/<x>",
                "has a character that must be percent-encoded: '<'",
            ),
            (
                "https://example.com/a%zz",
                "has a % that does not start a %XX escape",
            ),
            (
                "https://example.com/{x}",
                "has a character that must be percent-encoded: '{'",
            ),
        ];
        for (url, reason) in cases {
            assert_eq!(
                EndpointUrl::parse(url).unwrap_err().to_string(),
                reason,
                "{url}"
            );
        }
    }

    #[test]
    fn debug_shows_the_origin_only() {
        let url = EndpointUrl::parse("https://h.example/mcp?api_key=s3cret").unwrap();
        assert_eq!(format!("{url:?}"), "EndpointUrl(\"https://h.example\")");
    }

    #[test]
    fn length_is_bounded() {
        let url = format!("https://h/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(EndpointUrl::parse(&url).unwrap_err(), UrlError::TooLong);
        assert_eq!(UrlError::TooLong.to_string(), "must be at most 2048 bytes");
    }
}
