//! JSON-RPC and MCP error codes.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An error code: an open set of integers with names for the ones MCP defines.
///
/// Unknown codes are kept as they are; [`ErrorCode::name`] returns `None` for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: a JSON-RPC error code is an integer
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The payload was not valid JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON was not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist or is not offered.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The parameters were invalid (also: unknown tool, bad cursor, missing `_meta` keys).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// An internal error in the peer.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// A resource was not found (handshake era; the stateless era uses -32602 instead).
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// The server needs a URL-mode elicitation first (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: Self = Self(-32042);
    /// HTTP headers were missing, malformed or disagree with the body (2026-07-28).
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// The request lacks a client capability the server needs (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: Self = Self(-32021);
    /// The requested protocol version is not served (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);

    /// A short name for a code this crate knows, or `None`.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "parse error",
            Self::INVALID_REQUEST => "invalid request",
            Self::METHOD_NOT_FOUND => "method not found",
            Self::INVALID_PARAMS => "invalid params",
            Self::INTERNAL_ERROR => "internal error",
            Self::RESOURCE_NOT_FOUND => "resource not found",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            Self::HEADER_MISMATCH => "header mismatch",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "missing required client capability",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "unsupported protocol version",
            _ => return None,
        })
    }

    /// The code as a label of bounded cardinality, for telemetry (OpenTelemetry's
    /// `error.type`): the number of a code this crate knows, `_OTHER` for any other (a
    /// server choosing codes at will cannot grow a metric without bound).
    pub fn label(self) -> &'static str {
        match self {
            Self::PARSE_ERROR => "-32700",
            Self::INVALID_REQUEST => "-32600",
            Self::METHOD_NOT_FOUND => "-32601",
            Self::INVALID_PARAMS => "-32602",
            Self::INTERNAL_ERROR => "-32603",
            Self::RESOURCE_NOT_FOUND => "-32002",
            Self::URL_ELICITATION_REQUIRED => "-32042",
            Self::HEADER_MISMATCH => "-32020",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "-32021",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "-32022",
            _ => "_OTHER",
        }
    }

    /// True for the codes JSON-RPC itself reserves (-32768 to -32000).
    pub fn is_reserved_range(self) -> bool {
        (-32768..=-32000).contains(&self.0)
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        Self(code)
    }
}

/// Formats as the number followed by the name when known, e.g. `-32601 (method not found)`.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_known_codes_only() {
        assert_eq!(ErrorCode::METHOD_NOT_FOUND.name(), Some("method not found"));
        assert_eq!(
            ErrorCode(-32022).name(),
            Some("unsupported protocol version")
        );
        assert_eq!(ErrorCode(-32001).name(), None);
        assert_eq!(ErrorCode(-32001).to_string(), "-32001");
        assert_eq!(ErrorCode(-32020).to_string(), "-32020 (header mismatch)");
    }

    #[test]
    fn labels_are_the_numbers_of_known_codes_only() {
        for code in [
            -32700, -32600, -32601, -32602, -32603, -32002, -32042, -32020, -32021, -32022,
        ] {
            let code = ErrorCode(code);
            assert!(code.name().is_some());
            assert_eq!(code.label(), code.0.to_string());
        }
        for unknown in [-32001, -32000, 0, 1, i64::MIN, i64::MAX] {
            assert_eq!(ErrorCode(unknown).label(), "_OTHER");
        }
    }

    #[test]
    fn reserved_range_bounds() {
        assert!(ErrorCode(-32000).is_reserved_range());
        assert!(ErrorCode(-32768).is_reserved_range());
        assert!(!ErrorCode(-1).is_reserved_range());
        assert!(!ErrorCode(-32769).is_reserved_range());
    }
}
