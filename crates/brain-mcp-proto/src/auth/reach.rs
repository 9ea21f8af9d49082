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
        let [a, b, ..] = ip.octets();
        match (a, b) {
            (127, _) => Self::Loopback,
            (0, _) => Self::Unspecified,
            (10, _) | (192, 168) => Self::Private,
            (172, 16..=31) => Self::Private,
            (100, 64..=127) => Self::Private,
            (169, 254) => Self::LinkLocal,
            _ => Self::Public,
        }
    }

    fn of_v6(ip: Ipv6Addr) -> Self {
        let first = ip.segments()[0];
        if ip.is_loopback() {
            Self::Loopback
        } else if ip.is_unspecified() {
            Self::Unspecified
        } else if first & 0xffc0 == 0xfe80 {
            Self::LinkLocal
        } else if first & 0xfe00 == 0xfc00 {
            Self::UniqueLocal
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
/// can tell).
pub fn host_class(host: &str) -> Option<AddrClass> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(AddrClass::of(ip));
    }
    is_localhost_name(bare).then_some(AddrClass::Loopback)
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
            ("fec0::1", Public),
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
