//! Protocol versions and negotiation.

use std::fmt;

/// A protocol revision this crate speaks.
///
/// Ordering follows release order from an explicit list; version strings
/// are never compared as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2025-03-26 (handshake; batches allowed).
    V2025_03_26,
    /// 2025-06-18 (handshake).
    V2025_06_18,
    /// 2025-11-25 (handshake).
    V2025_11_25,
    /// 2026-07-28 (stateless: no `initialize`, per-request `_meta`).
    V2026_07_28,
}

/// The newest handshake-era version: what we offer in `initialize`.
pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;
/// The newest version overall.
pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

impl ProtocolVersion {
    /// Every known version, oldest first.
    pub const ALL: [Self; 4] = [
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];
    /// The newest handshake-era version.
    pub const LATEST_HANDSHAKE: Self = LATEST_HANDSHAKE;
    /// The newest version overall.
    pub const LATEST: Self = LATEST;

    /// The wire string, e.g. `2025-11-25`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string exactly; unknown strings give `None`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// True for the stateless era (2026-07-28 and later).
    pub fn is_stateless(self) -> bool {
        self >= Self::V2026_07_28
    }

    /// True for versions negotiated through `initialize`.
    pub fn is_handshake(self) -> bool {
        !self.is_stateless()
    }

    /// Whether JSON-RPC batches may arrive (2025-03-26 only).
    pub fn allows_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// Whether the `MCP-Protocol-Version` HTTP header is sent (2025-06-18+).
    pub fn uses_version_header(self) -> bool {
        self >= Self::V2025_06_18
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProtocolVersion {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| VersionError::Unknown(s.to_owned()))
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The server picked a version this client cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionError {
    /// Not a version this crate knows.
    #[error("unknown protocol version {0:?}")]
    Unknown(String),
    /// A stateless version answered to `initialize`.
    #[error("server answered initialize with {0}, which has no handshake")]
    NotHandshake(ProtocolVersion),
}

/// Checks the `protocolVersion` of an `InitializeResult`: it must be a
/// handshake-era version this crate knows.
pub fn negotiate_handshake(server_answer: &str) -> Result<ProtocolVersion, VersionError> {
    let v = ProtocolVersion::parse(server_answer)
        .ok_or_else(|| VersionError::Unknown(server_answer.to_owned()))?;
    if v.is_stateless() {
        Err(VersionError::NotHandshake(v))
    } else {
        Ok(v)
    }
}

/// The newest stateless version in a server's list (`supportedVersions` of
/// `server/discover`, or `supported` of a -32022 error), if any.
pub fn pick_stateless(supported: &[String]) -> Option<ProtocolVersion> {
    pick(supported, ProtocolVersion::is_stateless)
}

/// The newest handshake version in a server's list, if any.
pub fn pick_handshake(supported: &[String]) -> Option<ProtocolVersion> {
    pick(supported, ProtocolVersion::is_handshake)
}

fn pick(supported: &[String], keep: fn(ProtocolVersion) -> bool) -> Option<ProtocolVersion> {
    supported
        .iter()
        .filter_map(|s| ProtocolVersion::parse(s))
        .filter(|v| keep(*v))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("2024-11-05"), None);
        assert_eq!(ProtocolVersion::parse(" 2025-11-25"), None);
        assert!(ProtocolVersion::V2025_03_26 < ProtocolVersion::V2025_06_18);
        assert!(LATEST_HANDSHAKE < LATEST);
        assert!(LATEST.is_stateless() && !LATEST_HANDSHAKE.is_stateless());
        assert!(
            ProtocolVersion::V2025_03_26.allows_batches() && !LATEST_HANDSHAKE.allows_batches()
        );
        assert!(!ProtocolVersion::V2025_03_26.uses_version_header());
        assert_eq!("2026-07-28".parse::<ProtocolVersion>(), Ok(LATEST));
    }

    #[test]
    fn handshake_negotiation() {
        assert_eq!(
            negotiate_handshake("2025-06-18"),
            Ok(ProtocolVersion::V2025_06_18)
        );
        assert_eq!(
            negotiate_handshake("2026-07-28"),
            Err(VersionError::NotHandshake(LATEST))
        );
        assert_eq!(
            negotiate_handshake("2024-11-05"),
            Err(VersionError::Unknown("2024-11-05".into()))
        );
    }

    #[test]
    fn picking_from_lists() {
        let list = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            pick_stateless(&list(&["2025-11-25", "2026-07-28", "2099-01-01"])),
            Some(LATEST)
        );
        assert_eq!(pick_stateless(&list(&["2025-11-25", "2025-06-18"])), None);
        assert_eq!(
            pick_handshake(&list(&["2025-06-18", "2025-11-25", "2026-07-28"])),
            Some(LATEST_HANDSHAKE)
        );
        assert_eq!(pick_handshake(&[]), None);
    }
}
