//! How a request is framed in each era: its headers and, in the 2026 era, its `_meta`.

use crate::headers::encode_header_str;
use crate::mcp::RequestMeta;
use crate::meta::RequestMetaBuilder;
use crate::version::ProtocolVersion;

use super::outgoing::{Header, Identity};

use crate::headers::{
    MCP_METHOD as METHOD, MCP_NAME as NAME, MCP_PROTOCOL_VERSION as PROTOCOL_VERSION,
    MCP_SESSION_ID as SESSION_ID,
};

/// Resume attempts for a broken handshake-era reply stream (SEP-1699).
const HANDSHAKE_RESUMES: u32 = 2;

/// How the requests of one exchange are framed.
/// Its `Debug` says whether there is a session id, never what it is (a server may make
/// a token its session id).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Handshake era: the session id (if the server gave one) and the negotiated version
    /// (`None` before `initialize` has been answered).
    Handshake {
        /// `Mcp-Session-Id`.
        session: Option<String>,
        /// The negotiated version, sent as `MCP-Protocol-Version` where it has one.
        version: Option<ProtocolVersion>,
    },
    /// 2026 era at this version: every request describes itself.
    Stateless(ProtocolVersion),
}

impl std::fmt::Debug for Framing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Handshake { session, version } => f
                .debug_struct("Handshake")
                .field("session", &session.as_ref().map(|_| "***"))
                .field("version", version)
                .finish(),
            Self::Stateless(version) => f.debug_tuple("Stateless").field(version).finish(),
        }
    }
}

impl Framing {
    /// Framing before a handshake-era session exists (for `initialize`).
    pub fn before_session() -> Self {
        Self::Handshake {
            session: None,
            version: None,
        }
    }

    /// Whether a session must be opened before any other request: the handshake era,
    /// before `initialize`. A driver asks this rather than matching on the era.
    pub fn opens_session(&self) -> bool {
        matches!(
            self,
            Self::Handshake {
                session: None,
                version: None
            }
        )
    }

    /// The protocol version the messages of this framing speak, once known: the version
    /// a handshake-era session negotiated (none before `initialize` is answered), or the
    /// 2026-era version. Telemetry names it (`mcp.protocol.version`).
    pub fn protocol_version(&self) -> Option<&'static str> {
        match self {
            Self::Handshake { version, .. } => version.map(ProtocolVersion::as_str),
            Self::Stateless(v) => Some(v.as_str()),
        }
    }

    /// The session id, in a handshake-era session that has one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::Handshake { session, .. } => session.as_deref(),
            Self::Stateless(_) => None,
        }
    }

    /// The headers of a request for `method`: in a session its id and version; in the 2026
    /// era the version, `Mcp-Method`, `Mcp-Name` (`name`, encoded when it is not plain
    /// ASCII) and the `Mcp-Param-*` headers in `params` (name, encoded value).
    pub fn headers(
        &self,
        method: &'static str,
        name: Option<&str>,
        params: Vec<(String, String)>,
    ) -> Vec<Header> {
        let mut out = self.base_headers();
        if let Self::Stateless(_) = self {
            out.push(Header::new(METHOD, method));
            if let Some(name) = name {
                out.push(Header::new(NAME, encode_header_str(name)));
            }
            out.extend(
                params
                    .into_iter()
                    .map(|(name, value)| Header::new(name.to_ascii_lowercase(), value)),
            );
        }
        out
    }

    /// The headers that hold for every message of the exchange (a session's DELETE, a
    /// resuming GET): the session id and version only.
    pub fn base_headers(&self) -> Vec<Header> {
        let mut out = Vec::with_capacity(4);
        match self {
            Self::Handshake { session, version } => {
                if let Some(id) = session {
                    out.push(Header::sensitive(SESSION_ID, id.clone()));
                }
                if let Some(v) = version.filter(|v| v.uses_version_header()) {
                    out.push(Header::new(PROTOCOL_VERSION, v.as_str()));
                }
            }
            Self::Stateless(v) => {
                out.push(Header::new(PROTOCOL_VERSION, v.as_str()));
            }
        }
        out
    }

    /// How often a reply stream that breaks before the response may be resumed: in the
    /// handshake era a few times (SEP-1699); in the 2026 era never (a broken stream loses
    /// the request).
    pub fn resume_attempts(&self) -> u32 {
        match self {
            Self::Handshake { .. } => HANDSHAKE_RESUMES,
            Self::Stateless(_) => 0,
        }
    }

    /// The `_meta` of a request: in the 2026 era the version, capabilities and client
    /// info it must carry; in the handshake era nothing (they were sent once, with
    /// `initialize`).
    pub fn meta(&self, identity: &Identity) -> RequestMeta {
        match self {
            Self::Stateless(v) => RequestMetaBuilder::new(*v, identity.capabilities().clone())
                .client_info(identity.info().clone())
                .build(),
            Self::Handshake { .. } => RequestMeta::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_session_id() {
        let framing = Framing::Handshake {
            session: Some("tok-AS-SESSION-planted".into()),
            version: None,
        };
        let shown = format!("{framing:?}");
        assert!(
            !shown.contains("planted") && shown.contains("***"),
            "{shown}"
        );
    }

    #[test]
    fn the_protocol_version_is_known_once_negotiated() {
        assert_eq!(Framing::before_session().protocol_version(), None);
        let session = Framing::Handshake {
            session: Some("s".into()),
            version: Some(ProtocolVersion::V2025_06_18),
        };
        assert_eq!(session.protocol_version(), Some("2025-06-18"));
        let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
        assert_eq!(stateless.protocol_version(), Some("2026-07-28"));
    }
}
