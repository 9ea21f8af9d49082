//! `NO_PROXY`: which destinations are reached directly. curl's rules, with Go's where curl
//! has none; the table in `docs/transport.md` lists each case, and the tests below pin it.
//!
//! - Entries are separated by commas and blanks; case does not matter.
//! - `*` alone (or as an entry, as Go reads it) exempts every destination, IP literals
//!   included.
//! - A host name matches itself and its subdomains; a leading `.` (or `*.`) and one
//!   trailing `.` on the entry are ignored, and one trailing `.` on the destination too,
//!   so `internal.test`, `.internal.test` and `internal.test.` all match
//!   `mcp.internal.test.`.
//! - An IP address matches that address; with `/bits` (CIDR) every address of the block.
//!   IPv6 entries may be written with or without brackets (`fd00::/8`, `[::1]`). A host
//!   name entry never matches an IP destination, nor the other way round.
//! - An entry with a port (`host:8080`, `10.0.0.1:8080`, `[::1]:8080`) matches that port
//!   only (Go; curl has no port form). A block with an invalid prefix length matches
//!   nothing.

use std::net::IpAddr;

use http::Uri;

/// A parsed `NO_PROXY` list.
#[derive(Clone, Debug, Default)]
pub(crate) struct NoProxy {
    /// `*`: everything is direct.
    all: bool,
    entries: Vec<Entry>,
}

#[derive(Clone, Debug)]
struct Entry {
    what: Pattern,
    port: Option<u16>,
}

#[derive(Clone, Debug)]
enum Pattern {
    /// A host name, lower case, without leading or trailing dots.
    Domain(String),
    /// An address block: the address and how many leading bits must match.
    Block(IpAddr, u8),
    /// Something that matches nothing (a block with a bad prefix length).
    Nothing,
}

impl NoProxy {
    /// The list `text`, in `NO_PROXY` form.
    pub(crate) fn parse(text: &str) -> Self {
        let mut list = Self::default();
        for token in text
            .split(|c: char| c == ',' || c.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
        {
            if token == "*" {
                list.all = true;
                continue;
            }
            list.entries.push(Entry::parse(token));
        }
        list
    }

    /// Whether `dst` is reached directly.
    pub(crate) fn matches(&self, dst: &Uri) -> bool {
        if self.all {
            return true;
        }
        let Some(host) = dst.host() else {
            return false;
        };
        let port = dst.port_u16().or(match dst.scheme_str() {
            Some("https") => Some(443),
            _ => Some(80),
        });
        let target = Target::of(host);
        self.entries
            .iter()
            .any(|entry| entry.port.is_none_or(|p| Some(p) == port) && entry.what.matches(&target))
    }
}

/// A destination host, read once.
enum Target {
    Ip(IpAddr),
    /// Lower case, one trailing dot removed.
    Name(String),
}

impl Target {
    fn of(host: &str) -> Self {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<IpAddr>() {
            Ok(ip) => Self::Ip(ip),
            Err(_) => {
                let name = bare.strip_suffix('.').unwrap_or(bare);
                Self::Name(name.to_ascii_lowercase())
            }
        }
    }
}

impl Entry {
    fn parse(token: &str) -> Self {
        let (host, port) = split_port(token);
        let what = match Pattern::block(host) {
            Some(block) => block,
            None => {
                let name = host.strip_prefix('*').unwrap_or(host);
                let name = name.strip_prefix('.').unwrap_or(name);
                let name = name.strip_suffix('.').unwrap_or(name);
                if name.is_empty() {
                    Pattern::Nothing
                } else {
                    Pattern::Domain(name.to_ascii_lowercase())
                }
            }
        };
        Self { what, port }
    }
}

/// `token` without a `:port` suffix, and the port. An IPv6 address is only taken to have a
/// port in its bracketed form (`[::1]:8080`).
fn split_port(token: &str) -> (&str, Option<u16>) {
    if let Some(rest) = token.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((inside, "")) => (inside, None),
            Some((inside, tail)) => match tail.strip_prefix(':').and_then(|p| p.parse().ok()) {
                Some(port) => (inside, Some(port)),
                None => (token, None),
            },
            None => (token, None),
        };
    }
    match token.rsplit_once(':') {
        // One colon: host:port. More: an IPv6 address (or block) without brackets.
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (token, None),
        },
        _ => (token, None),
    }
}

impl Pattern {
    /// An address or a block (`10.0.0.0/8`, `fd00::/8`), when `text` is one.
    fn block(text: &str) -> Option<Self> {
        let (addr, bits) = match text.split_once('/') {
            Some((addr, bits)) => (addr, Some(bits)),
            None => (text, None),
        };
        let ip: IpAddr = addr.parse().ok()?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(bits) => match bits.parse::<u8>() {
                Ok(b) if b <= max => b,
                _ => return Some(Self::Nothing),
            },
        };
        Some(Self::Block(ip, bits))
    }

    fn matches(&self, target: &Target) -> bool {
        match (self, target) {
            (Self::Domain(domain), Target::Name(name)) => {
                name == domain
                    || name
                        .strip_suffix(domain.as_str())
                        .is_some_and(|head| head.ends_with('.'))
            }
            (Self::Block(net, bits), Target::Ip(ip)) => in_block(*ip, *net, *bits),
            _ => false,
        }
    }
}

fn in_block(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, b, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(a.to_bits()), u128::from(b.to_bits()), 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (a.to_bits(), b.to_bits(), 128),
        _ => return false,
    };
    if bits == 0 {
        return true;
    }
    let shift = width - u32::from(bits);
    (a >> shift) == (b >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(list: &str, dst: &str) -> bool {
        NoProxy::parse(list).matches(&dst.parse().expect("uri"))
    }

    /// The table in docs/transport.md, row by row: the list, the destination, and whether
    /// it goes directly. curl's documented behaviour unless the row says Go.
    #[test]
    fn the_documented_table() {
        let rows: &[(&str, &str, bool)] = &[
            // `*` covers everything, IP literals included.
            ("*", "http://example.com/", true),
            ("*", "http://192.0.2.1:8080/mcp", true),
            ("*", "http://[2001:db8::1]:8080/mcp", true),
            ("*", "https://192.0.2.1/", true),
            (" * ", "https://192.0.2.1/", true),
            // Go: `*` as one entry of a list.
            ("example.org, *", "http://192.0.2.1/", true),
            // Names: the name and its subdomains, on a label boundary, any case.
            ("internal.test", "http://internal.test/", true),
            ("internal.test", "http://mcp.internal.test/", true),
            ("internal.test", "http://MCP.Internal.Test/", true),
            ("internal.test", "http://notinternal.test/", false),
            ("internal.test", "http://internal.test.evil/", false),
            (".internal.test", "http://internal.test/", true),
            (".internal.test", "http://a.b.internal.test/", true),
            ("*.internal.test", "http://a.internal.test/", true),
            // One trailing dot is ignored on the host and on the entry.
            ("internal.test", "http://mcp.internal.test.:8080/mcp", true),
            ("internal.test.", "http://mcp.internal.test/", true),
            ("internal.test.", "http://mcp.internal.test./", true),
            // Addresses and blocks.
            ("192.0.2.1", "http://192.0.2.1/", true),
            ("192.0.2.1", "http://192.0.2.2/", false),
            ("10.0.0.0/8", "http://10.200.3.4/", true),
            ("10.0.0.0/8", "http://11.0.0.1/", false),
            ("10.0.0.0/33", "http://10.0.0.1/", false),
            ("0.0.0.0/0", "http://203.0.113.9/", true),
            ("fd00::/8", "http://[fd12::1]/", true),
            ("fd00::/8", "http://[fe80::1]/", false),
            ("2001:db8::1", "http://[2001:db8::1]:8080/", true),
            ("[2001:db8::1]", "http://[2001:db8::1]/", true),
            ("::1/128", "http://[::1]/", true),
            // A name never matches an address, nor the other way round.
            ("192.0.2.1", "http://host192.0.2.1/", false),
            ("example.com", "http://93.184.216.34/", false),
            // Go: an entry with a port matches that port only.
            ("internal.test:8080", "http://mcp.internal.test:8080/", true),
            (
                "internal.test:8080",
                "http://mcp.internal.test:9090/",
                false,
            ),
            ("internal.test:443", "https://internal.test/", true),
            ("[::1]:8080", "http://[::1]:8080/", true),
            ("[::1]:8080", "http://[::1]:8081/", false),
            ("10.0.0.1:80", "http://10.0.0.1/", true),
            // Separators: commas and blanks, empty entries ignored.
            ("a.test  b.test,,c.test", "http://b.test/", true),
            ("", "http://b.test/", false),
            (".", "http://b.test/", false),
        ];
        for (list, dst, want) in rows {
            assert_eq!(direct(list, dst), *want, "NO_PROXY={list:?} {dst}");
        }
    }
}
