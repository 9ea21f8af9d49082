//! HTTP header names and the 2026-07-28 rules for headers derived from
//! tool parameters (`x-mcp-header`).
//!
//! Only names and pure functions live here; setting headers on a request is
//! the transport's job.

mod param;
mod value;

pub use param::{
    InvalidParamHeader, ParamHeader, ParamHeaderProblem, ParamKind, param_header_values,
    param_header_values_exact, param_headers,
};
pub use value::{HeaderValueError, decode_header_value, encode_header_str, encode_header_value};

// The one home of the MCP header names, in the lower case HTTP/2 writes and `http`'s
// `HeaderName` holds (names are case-insensitive on the wire); the core and the transport
// both take them from here.

/// Session id header (handshake era).
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// Negotiated (or per-request) protocol version.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The JSON-RPC method of the body (2026-07-28).
pub const MCP_METHOD: &str = "mcp-method";
/// `params.name` or `params.uri` of the body (2026-07-28).
pub const MCP_NAME: &str = "mcp-name";
/// Prefix of headers mirrored from tool arguments (2026-07-28), as the spec writes it:
/// the names built with it keep the case the schema declares (HTTP reads names without
/// case).
pub const MCP_PARAM_PREFIX: &str = "Mcp-Param-";
/// SSE resumption header (handshake era).
pub const LAST_EVENT_ID: &str = "last-event-id";
/// The names the client core sends with nearly every message.
pub const FIXED: [&str; 4] = [MCP_SESSION_ID, MCP_PROTOCOL_VERSION, MCP_METHOD, MCP_NAME];
/// The schema keyword that declares a mirrored parameter.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// A session id must be non-empty visible ASCII (0x21 to 0x7E).
pub fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7E).contains(&b))
}

/// True for an RFC 9110 token: one or more of letters, digits and
/// ``!#$%&'*+-.^_`|~``.
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids() {
        assert!(is_valid_session_id("abc-123_~!"));
        assert!(!is_valid_session_id(""));
        assert!(!is_valid_session_id("a b"));
        assert!(!is_valid_session_id("a\u{7f}"));
        assert!(!is_valid_session_id("é"));
    }

    #[test]
    fn tokens() {
        assert!(is_token("Region"));
        assert!(is_token("a!#$%&'*+-.^_`|~9"));
        assert!(!is_token(""));
        assert!(!is_token("a:b"));
        assert!(!is_token("a b"));
        assert!(!is_token("Région"));
        assert!(!is_token("Region\t1"));
    }
}
