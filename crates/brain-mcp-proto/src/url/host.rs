//! The authority's host and port: an IPv6 literal in brackets, an IPv4 address, or a
//! name, then an optional port.

use core::net::{Ipv4Addr, Ipv6Addr};

use super::error::UrlError;

/// Splits and checks `host[:port]`; the host keeps its brackets if it is an IPv6 literal.
/// Both rules ask for a host, a well-formed IPv6 literal (no zone: zone ids are not sent
/// over HTTP) and a port of 1 to 65535 in digits; with `names`, a host that is not a
/// literal must also be an IPv4 address or a name TLS accepts ([`is_host_name`]).
pub(super) fn host_and_port(authority: &str, names: bool) -> Result<(&str, Option<u16>), UrlError> {
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
    if names && !host.starts_with('[') && !is_host_name(host) {
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
    if host.parse::<Ipv4Addr>().is_ok() {
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
