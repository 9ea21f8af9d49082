//! Which addresses a URL a peer named may reach: the one destination rule for every URL
//! a server or its documents name (protected resource metadata, authorization server
//! metadata, token, authorization and registration endpoints, and any later one).
//!
//! A hostile server can name any URL, and the host would fetch it: its own loopback (an
//! admin port), the cloud metadata address, a machine on the private network. So what a
//! peer-named URL may reach depends on where the MCP server itself is, as its operator
//! configured it:
//!
//! | the address is | reached when |
//! |---|---|
//! | public | always |
//! | loopback (`127.0.0.0/8`, `::1`), or unspecified (`0.0.0.0/8`, `::`: connecting to it reaches this machine) | the server is on loopback (or unspecified) |
//! | private (`10/8`, `172.16/12`, `192.168/16`, and CGNAT `100.64/10`) | the server is private too, or the host allows private destinations |
//! | link-local (`169.254/16`, `fe80::/10`: cloud metadata lives here) | the server is link-local too, or the host allows private destinations |
//! | unique-local (`fc00::/7`) | the server is unique-local too, or the host allows private destinations |
//!
//! Multicast, reserved and broadcast addresses (`224.0.0.0/3`, `ff00::/8`) count as
//! unspecified; the IETF and benchmarking blocks (`192.0.0.0/24`, `198.18.0.0/15`) as
//! private; the deprecated site-local `fec0::/10` as unique-local. An IPv6 address that
//! carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
//! `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) counts as that IPv4 address. A
//! host spelled as a number `inet_aton` would read (`127.1`, `0x7f.0.0.1`, `2130706433`)
//! counts as unspecified.
//!
//! An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) counts as its IPv4 address. The host's
//! allowance never opens loopback: a server elsewhere has no business naming this
//! machine.
//!
//! The rule is applied to the addresses actually connected to, after name resolution (the
//! transport does that with [`Destinations::check`]); the text of a URL is checked too, by
//! [`super::url::check_endpoint`], before anything is fetched.

use core::fmt;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of network an address is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::exhaustive_enums)] // every address falls in one of these
pub enum AddrClass {
    /// This machine: `127.0.0.0/8`, `::1`.
    Loopback,
    /// The unspecified address and "this network": `0.0.0.0/8`, `::`. Connecting to it
    /// reaches this machine on common systems, so it is treated like loopback.
    Unspecified,
    /// A private network: `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, and the
    /// shared address space of carrier-grade NAT and overlay networks, `100.64.0.0/10`.
    Private,
    /// Link-local: `169.254.0.0/16` (where cloud metadata services answer), `fe80::/10`.
    LinkLocal,
    /// IPv6 unique-local: `fc00::/7`.
    UniqueLocal,
    /// Everything else.
    Public,
}

impl AddrClass {
    /// The class of `ip`; an IPv4-mapped IPv6 address is classed as its IPv4 address.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self::of_v4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self::of_v4(v4),
                None => Self::of_v6(v6),
            },
        }
    }

    fn of_v4(ip: Ipv4Addr) -> Self {
        let [a, b, c, _] = ip.octets();
        match (a, b, c) {
            (127, ..) => Self::Loopback,
            // "This network", multicast, reserved and broadcast: no unicast host out
            // there; treated like this machine.
            (0, ..) | (224..=255, ..) => Self::Unspecified,
            (10, ..) | (192, 168, _) => Self::Private,
            (172, 16..=31, _) => Self::Private,
            (100, 64..=127, _) => Self::Private,
            // IETF protocol assignments and benchmarking networks: not the internet.
            (192, 0, 0) | (198, 18..=19, _) => Self::Private,
            (169, 254, _) => Self::LinkLocal,
            _ => Self::Public,
        }
    }

    fn of_v6(ip: Ipv6Addr) -> Self {
        let s = ip.segments();
        let embedded = |hi: u16, lo: u16| {
            let [h1, h2] = hi.to_be_bytes();
            let [l1, l2] = lo.to_be_bytes();
            Self::of_v4(Ipv4Addr::new(h1, h2, l1, l2))
        };
        if ip.is_loopback() {
            Self::Loopback
        } else if ip.is_unspecified() {
            Self::Unspecified
        } else if s[..6] == [0; 6] {
            // IPv4-compatible (`::a.b.c.d`, deprecated): the IPv4 address inside.
            embedded(s[6], s[7])
        } else if s[0] == 0x64 && s[1] == 0xff9b {
            // NAT64 (`64:ff9b::/96`, and the local-use `64:ff9b:1::/48`): it reaches the
            // IPv4 address in its last 32 bits.
            embedded(s[6], s[7])
        } else if s[0] == 0x2002 {
            // 6to4: the IPv4 address in bits 16 to 47.
            embedded(s[1], s[2])
        } else if s[0] & 0xffc0 == 0xfe80 {
            Self::LinkLocal
        } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
            // Unique-local, and the deprecated site-local `fec0::/10`.
            Self::UniqueLocal
        } else if s[0] & 0xff00 == 0xff00 {
            // Multicast.
            Self::Unspecified
        } else {
            Self::Public
        }
    }

    /// A short name for messages: `loopback`, `private`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::Unspecified => "unspecified",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::UniqueLocal => "unique-local",
            Self::Public => "public",
        }
    }

    /// This machine, reached through loopback or the unspecified address.
    fn is_this_machine(self) -> bool {
        matches!(self, Self::Loopback | Self::Unspecified)
    }
}

impl fmt::Display for AddrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a host name (as a URL holds it, any case, one trailing dot allowed) is
/// `localhost` or under it: this machine's loopback, whatever a resolver says (RFC 6761).
pub fn is_localhost_name(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// The class of a URL's host when its text alone says it: an IP literal (IPv6 in
/// brackets or not), or a `localhost` name. `None` for any other name (only resolving it
/// can tell). A host that some resolvers read as an IPv4 address though it is not a
/// dotted quad (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`) is classed
/// [`AddrClass::Unspecified`]: what it reaches depends on who parses it (a proxy may read
/// it as loopback), so it is treated like this machine.
pub fn host_class(host: &str) -> Option<AddrClass> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let bare = bare.strip_suffix('.').unwrap_or(bare);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(AddrClass::of(ip));
    }
    if numeric_ipv4_spelling(bare) {
        return Some(AddrClass::Unspecified);
    }
    is_localhost_name(bare).then_some(AddrClass::Loopback)
}

/// Whether `host` is made of one to four dot-separated numbers (decimal, octal with a
/// leading 0, or hex with `0x`) the way `inet_aton` reads an IPv4 address.
fn numeric_ipv4_spelling(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    (1..=4).contains(&parts.len())
        && parts.iter().all(|p| {
            let lower = p.to_ascii_lowercase();
            match lower.strip_prefix("0x") {
                Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
                None => !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()),
            }
        })
}

/// The class of the MCP server, from the addresses its configured URL names or resolves
/// to: their one class when they all share it, else (mixed, or none known) `Public`,
/// the class that reaches least. A server that is partly public is treated as public.
pub fn server_class<I: IntoIterator<Item = AddrClass>>(classes: I) -> AddrClass {
    let mut classes = classes.into_iter();
    let Some(first) = classes.next() else {
        return AddrClass::Public;
    };
    if classes.all(|c| c == first) {
        first
    } else {
        AddrClass::Public
    }
}

/// What peer-named URLs may reach for one MCP server: the server's class, and whether
/// the host allows private destinations for every server (the host config's
/// `allow_private_auth_destinations`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Destinations {
    server: AddrClass,
    allow_private: bool,
}

/// Which rule refused an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// This machine (loopback or unspecified) is reached only for a server on loopback.
    LoopbackOnlyFromLoopback,
    /// A private, link-local or unique-local address is reached only for a server in the
    /// same class, unless the host allows private destinations.
    PrivateOnlyFromSameClass,
}

/// Why a peer-named destination is refused: the rule and the address's class, never
/// the address or the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
#[non_exhaustive]
pub struct Refused {
    /// The rule that refused it.
    pub rule: Rule,
    /// The class of the refused address.
    pub class: AddrClass,
    /// The class of the MCP server it was named for.
    pub server: AddrClass,
}

impl Refused {
    fn describe(&self) -> String {
        match self.rule {
            Rule::LoopbackOnlyFromLoopback => format!(
                "a {} address is reached only for a server on loopback, and this server is {}",
                self.class, self.server
            ),
            Rule::PrivateOnlyFromSameClass => format!(
                "a {} address is reached only for a server in the same class (this one is {}) \
                 or when the host config sets allow_private_auth_destinations",
                self.class, self.server
            ),
        }
    }
}

impl Destinations {
    /// The destinations for a server of class `server` (see [`server_class`]), with the
    /// host's allowance for private destinations.
    pub fn new(server: AddrClass, allow_private: bool) -> Self {
        Self {
            server,
            allow_private,
        }
    }

    /// The server's class.
    pub fn server(&self) -> AddrClass {
        self.server
    }

    /// Whether private destinations are allowed whatever the server's class.
    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// Whether an address of class `class` may be reached (see the module docs).
    pub fn check(&self, class: AddrClass) -> Result<(), Refused> {
        let refused = |rule| Refused {
            rule,
            class,
            server: self.server,
        };
        match class {
            AddrClass::Public => Ok(()),
            AddrClass::Loopback | AddrClass::Unspecified => {
                if self.server.is_this_machine() {
                    Ok(())
                } else {
                    Err(refused(Rule::LoopbackOnlyFromLoopback))
                }
            }
            AddrClass::Private | AddrClass::LinkLocal | AddrClass::UniqueLocal => {
                if self.allow_private || self.server == class {
                    Ok(())
                } else {
                    Err(refused(Rule::PrivateOnlyFromSameClass))
                }
            }
        }
    }

    /// [`Self::check`] on an address.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refused> {
        self.check(AddrClass::of(ip))
    }

    /// [`Self::check`] on a URL's host when its text says its class (an IP literal or a
    /// `localhost` name); other names pass here and are checked once resolved.
    pub fn check_host(&self, host: &str) -> Result<(), Refused> {
        host_class(host).map_or(Ok(()), |class| self.check(class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_reserved_and_odd_spellings_are_not_public() {
        let v6 = |s: &str| AddrClass::of(s.parse::<IpAddr>().unwrap());
        assert_eq!(v6("64:ff9b::7f00:1"), Loopback, "NAT64 of 127.0.0.1");
        assert_eq!(
            v6("64:ff9b::a9fe:a9fe"),
            LinkLocal,
            "NAT64 of 169.254.169.254"
        );
        assert_eq!(v6("64:ff9b:1::a00:1"), Private);
        assert_eq!(v6("2002:7f00:1::1"), Loopback, "6to4 of 127.0.0.1");
        assert_eq!(v6("2002:a00:1::"), Private, "6to4 of 10.0.0.1");
        assert_eq!(v6("::7f00:1"), Loopback, "IPv4-compatible");
        assert_eq!(v6("fec0::1"), UniqueLocal, "site-local");
        assert_eq!(v6("ff02::1"), Unspecified, "multicast");
        assert_eq!(v6("2001:4860::8888"), Public);
        for v4 in ["224.0.0.1", "239.1.1.1", "240.0.0.1", "255.255.255.255"] {
            assert_eq!(v6(v4), Unspecified, "{v4}");
        }
        for v4 in ["192.0.0.8", "198.18.0.1", "198.19.255.255"] {
            assert_eq!(v6(v4), Private, "{v4}");
        }
        assert_eq!(v6("192.0.2.1"), Public);
        for odd in [
            "127.1",
            "0x7f.0.0.1",
            "2130706433",
            "0177.0.0.1",
            "0x7f000001",
            "127.0.0.1.",
        ] {
            let class = host_class(odd);
            assert!(
                matches!(class, Some(Unspecified | Loopback)),
                "{odd}: {class:?}"
            );
        }
        assert_eq!(host_class("example.com"), None);
        assert_eq!(host_class("1.example"), None);
    }
    use AddrClass::*;

    fn class(ip: &str) -> AddrClass {
        AddrClass::of(ip.parse().unwrap())
    }

    #[test]
    fn classes_of_addresses() {
        let table = [
            ("127.0.0.1", Loopback),
            ("127.255.1.2", Loopback),
            ("::1", Loopback),
            ("::ffff:127.0.0.1", Loopback),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("::", Unspecified),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.127.255.255", Private),
            ("::ffff:10.0.0.1", Private),
            ("169.254.169.254", LinkLocal),
            ("::ffff:169.254.169.254", LinkLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("172.15.0.1", Public),
            ("172.32.0.1", Public),
            ("100.63.0.1", Public),
            ("100.128.0.1", Public),
            ("192.169.0.1", Public),
            ("8.8.8.8", Public),
            ("2001:db8::1", Public),
            ("fec0::1", UniqueLocal),
        ];
        for (ip, want) in table {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn classes_of_hosts_as_written() {
        assert_eq!(host_class("localhost"), Some(Loopback));
        assert_eq!(host_class("Evil.LOCALHOST."), Some(Loopback));
        assert_eq!(host_class("[::1]"), Some(Loopback));
        assert_eq!(host_class("[::ffff:169.254.169.254]"), Some(LinkLocal));
        assert_eq!(host_class("10.0.0.7"), Some(Private));
        assert_eq!(host_class("auth.example.com"), None);
        assert_eq!(host_class("localhost.example.com"), None);
        assert_eq!(host_class("notlocalhost"), None);
        assert_eq!(host_class("a.localhost"), Some(Loopback));
    }

    #[test]
    fn the_server_class_is_the_one_its_addresses_share() {
        assert_eq!(server_class([Loopback, Loopback]), Loopback);
        assert_eq!(server_class([Private]), Private);
        assert_eq!(server_class([Loopback, Public]), Public);
        assert_eq!(server_class([Private, LinkLocal]), Public);
        assert_eq!(server_class([]), Public);
    }

    /// One row per rule of the module's table, for every server class.
    #[test]
    fn destination_rules() {
        let all = [
            Loopback,
            Unspecified,
            Private,
            LinkLocal,
            UniqueLocal,
            Public,
        ];
        for server in all {
            for allow in [false, true] {
                let d = Destinations::new(server, allow);
                // Public: always.
                assert_eq!(d.check(Public), Ok(()));
                // This machine: only for a server on it, the allowance never opens it.
                for local in [Loopback, Unspecified] {
                    let got = d.check(local);
                    if matches!(server, Loopback | Unspecified) {
                        assert_eq!(got, Ok(()), "{server:?} {local:?}");
                    } else {
                        assert_eq!(
                            got.map_err(|r| (r.rule, r.class)),
                            Err((Rule::LoopbackOnlyFromLoopback, local)),
                            "{server:?} {allow} {local:?}"
                        );
                    }
                }
                // Private classes: the same class, or the allowance.
                for private in [Private, LinkLocal, UniqueLocal] {
                    let got = d.check(private);
                    if allow || server == private {
                        assert_eq!(got, Ok(()), "{server:?} {allow} {private:?}");
                    } else {
                        assert_eq!(
                            got.map_err(|r| (r.rule, r.class)),
                            Err((Rule::PrivateOnlyFromSameClass, private)),
                            "{server:?} {allow} {private:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn refusals_name_the_rule_and_classes_only() {
        let d = Destinations::new(Public, false);
        let why = d.check_ip("127.0.0.1".parse().unwrap()).unwrap_err();
        assert_eq!(
            why.to_string(),
            "a loopback address is reached only for a server on loopback, and this server is public"
        );
        let why = d.check_host("169.254.169.254").unwrap_err().to_string();
        assert!(why.contains("link-local"), "{why}");
        assert!(why.contains("allow_private_auth_destinations"), "{why}");
        assert!(!why.contains("169.254"), "{why}");
        assert_eq!(d.check_host("auth.example.com"), Ok(()));
        assert!(d.check_host("x.localhost").is_err());
    }
}
