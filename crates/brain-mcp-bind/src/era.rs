//! Which protocol era a server speaks, learned once per server per process.
//!
//! The probe is a 2026-07-28 `server/discover`: side-effect free, so it may be retried on a
//! stale connection, and answered in a recognisable way by servers of both eras. The table
//! of answers and verdicts is in `docs/call-path.md`.

use std::collections::HashMap;
use std::sync::Mutex;

use brain_mcp_proto::jsonrpc::ErrorCode;
use brain_mcp_proto::mcp::{DiscoverResult, UnsupportedProtocolVersionData};
use brain_mcp_proto::version::{self, ProtocolVersion};
use http::StatusCode;

/// The protocol era of a server, with the version to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// `initialize` and sessions (2025-03-26 to 2025-11-25); the version is negotiated per session.
    Handshake,
    /// No handshake: every request carries this version in `_meta` and headers.
    Stateless(ProtocolVersion),
}

impl Era {
    /// A short name for diagnostics: `handshake` or the stateless version.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Handshake => "handshake",
            Self::Stateless(v) => v.as_str(),
        }
    }
}

/// What a probe's answer says about the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The server speaks this era; `cache` says whether the answer is firm enough to keep.
    Speaks {
        /// The era.
        era: Era,
        /// Keep it for later calls.
        cache: bool,
    },
    /// The server refused our credentials: no era can be learned and the call cannot go on.
    Refused(String),
}

impl Verdict {
    fn firm(era: Era) -> Self {
        Self::Speaks { era, cache: true }
    }
}

/// The verdict from a successful `server/discover` result.
pub(crate) fn from_result(result: Result<DiscoverResult, String>) -> Verdict {
    match result {
        Ok(found) => match version::pick_stateless(&found.supported_versions) {
            Some(v) => Verdict::firm(Era::Stateless(v)),
            // A result naming only handshake versions (or none we know): try the handshake.
            None => Verdict::firm(Era::Handshake),
        },
        // A success that is not a DiscoverResult (some servers answer `{}` to any method).
        Err(_) => Verdict::firm(Era::Handshake),
    }
}

/// The verdict from a JSON-RPC error answer, in a 2xx body or with an error status.
pub(crate) fn from_rpc_error(code: ErrorCode, data: Option<&str>) -> Verdict {
    if code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        let supported = data
            .and_then(|d| serde_json::from_str::<UnsupportedProtocolVersionData>(d).ok())
            .map(|d| d.supported)
            .unwrap_or_default();
        if let Some(v) = version::pick_stateless(&supported) {
            return Verdict::firm(Era::Stateless(v));
        }
    }
    // -32000 (no session), -32601 (unknown method), -32602, -32022 with only handshake
    // versions: all say the server wants the handshake.
    Verdict::firm(Era::Handshake)
}

/// The verdict from an HTTP error status without a usable JSON-RPC body.
pub(crate) fn from_status(status: StatusCode, www_authenticate: Option<&str>) -> Verdict {
    match status.as_u16() {
        401 | 403 => Verdict::Refused(match www_authenticate {
            Some(challenge) => {
                format!("the server refused the credentials ({status}; {challenge})")
            }
            None => format!("the server refused the credentials ({status})"),
        }),
        // A server error says nothing about the era: try the handshake for this call only.
        500..=599 => Verdict::Speaks {
            era: Era::Handshake,
            cache: false,
        },
        _ => Verdict::firm(Era::Handshake),
    }
}

/// Verdicts by server URL, for the life of the process.
#[derive(Debug, Default)]
pub(crate) struct EraCache {
    map: Mutex<HashMap<String, Era>>,
}

impl EraCache {
    /// The cached era of `url`, if any.
    pub(crate) fn get(&self, url: &str) -> Option<Era> {
        self.lock().get(url).copied()
    }

    /// Remembers the era of `url`.
    pub(crate) fn set(&self, url: &str, era: Era) {
        self.lock().insert(url.to_owned(), era);
    }

    /// Forgets `url`, so the next call probes again.
    pub(crate) fn forget(&self, url: &str) {
        self.lock().remove(url);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Era>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discover(versions: &[&str]) -> DiscoverResult {
        serde_json::from_value(serde_json::json!({
            "supportedVersions": versions,
            "capabilities": {},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "public"
        }))
        .expect("a valid DiscoverResult")
    }

    #[test]
    fn discover_results() {
        assert_eq!(
            from_result(Ok(discover(&["2025-11-25", "2026-07-28"]))),
            Verdict::firm(Era::Stateless(ProtocolVersion::V2026_07_28))
        );
        assert_eq!(
            from_result(Ok(discover(&["2025-11-25"]))),
            Verdict::firm(Era::Handshake)
        );
        assert_eq!(
            from_result(Err("not a DiscoverResult".into())),
            Verdict::firm(Era::Handshake)
        );
    }

    #[test]
    fn rpc_errors() {
        assert_eq!(
            from_rpc_error(ErrorCode(-32000), None),
            Verdict::firm(Era::Handshake)
        );
        assert_eq!(
            from_rpc_error(ErrorCode::METHOD_NOT_FOUND, None),
            Verdict::firm(Era::Handshake)
        );
        assert_eq!(
            from_rpc_error(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                Some(r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#)
            ),
            Verdict::firm(Era::Stateless(ProtocolVersion::V2026_07_28))
        );
        assert_eq!(
            from_rpc_error(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                Some(r#"{"supported":["2025-06-18"],"requested":"2026-07-28"}"#)
            ),
            Verdict::firm(Era::Handshake)
        );
    }

    #[test]
    fn statuses() {
        assert!(matches!(
            from_status(StatusCode::UNAUTHORIZED, Some("Bearer realm=\"x\"")),
            Verdict::Refused(m) if m.contains("401") && m.contains("realm")
        ));
        assert_eq!(
            from_status(StatusCode::BAD_GATEWAY, None),
            Verdict::Speaks {
                era: Era::Handshake,
                cache: false
            }
        );
        assert_eq!(
            from_status(StatusCode::NOT_FOUND, None),
            Verdict::firm(Era::Handshake)
        );
    }

    #[test]
    fn cache_forgets() {
        let cache = EraCache::default();
        cache.set("http://a/mcp", Era::Handshake);
        assert_eq!(cache.get("http://a/mcp"), Some(Era::Handshake));
        cache.forget("http://a/mcp");
        assert_eq!(cache.get("http://a/mcp"), None);
    }
}
