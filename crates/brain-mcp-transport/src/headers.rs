//! MCP request headers, the bearer token, and session id validation.

use std::fmt;

use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::error::{Delivery, ErrorKind, TransportError};

// Lowercase forms of the names in `brain_mcp_proto::headers` (a test checks they
// match), so they can be used as static `HeaderName`s.

/// `Mcp-Session-Id`.
pub(crate) const MCP_SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub(crate) const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub(crate) const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub(crate) const MCP_NAME: &str = "mcp-name";
/// `Last-Event-ID`.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";

/// A bearer token. `Debug` shows `***`; the value is only read when the
/// `Authorization` header is built, and that header is marked sensitive.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    /// Wraps a token (without the `Bearer ` prefix).
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token itself; take care not to log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(***)")
    }
}

/// The MCP headers of one HTTP request. Values are sent as given: the caller has
/// already encoded them (for example base64-wrapped `Mcp-Param-*` values).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct McpHeaders {
    /// `Mcp-Session-Id`, handshake era after `initialize`.
    pub session_id: Option<String>,
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method` (2026 era).
    pub method: Option<String>,
    /// `Mcp-Name` (2026 era).
    pub name: Option<String>,
    /// Extra headers such as `Mcp-Param-Region`: full header names and encoded values.
    pub params: Vec<(String, String)>,
    /// `Authorization: Bearer <token>` when set.
    pub bearer: Option<BearerToken>,
}

impl fmt::Debug for McpHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Session ids are credentials of a sort too: show only whether one is set.
        f.debug_struct("McpHeaders")
            .field("session_id", &self.session_id.as_ref().map(|_| "***"))
            .field("protocol_version", &self.protocol_version)
            .field("method", &self.method)
            .field("name", &self.name)
            .field("params", &self.params)
            .field("bearer", &self.bearer)
            .finish()
    }
}

impl McpHeaders {
    /// Writes these headers into `map`. Errors name the header, never its value.
    pub(crate) fn apply(&self, map: &mut HeaderMap) -> Result<(), TransportError> {
        let fixed = [
            (MCP_SESSION_ID, &self.session_id),
            (MCP_PROTOCOL_VERSION, &self.protocol_version),
            (MCP_METHOD, &self.method),
            (MCP_NAME, &self.name),
        ];
        for (name, value) in fixed {
            if let Some(v) = value {
                map.insert(HeaderName::from_static(name), value_of(name, v)?);
            }
        }
        for (name, value) in &self.params {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| invalid(format!("`{name}` is not a valid header name")))?;
            map.insert(header, value_of(name, value)?);
        }
        if let Some(token) = &self.bearer {
            let mut v =
                HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
                    invalid("the bearer token contains characters not allowed in a header".into())
                })?;
            v.set_sensitive(true);
            map.insert(AUTHORIZATION, v);
        }
        Ok(())
    }
}

fn value_of(name: &str, value: &str) -> Result<HeaderValue, TransportError> {
    let mut v = HeaderValue::from_str(value)
        .map_err(|_| invalid(format!("the value of `{name}` is not a valid header value")))?;
    if name.eq_ignore_ascii_case(MCP_SESSION_ID) {
        v.set_sensitive(true);
    }
    Ok(v)
}

fn invalid(message: String) -> TransportError {
    TransportError::new(ErrorKind::InvalidRequest, Delivery::NotSent, message)
}

/// True when `id` is a usable session id: non-empty visible ASCII without a comma (a
/// comma means a proxy joined repeated headers).
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    brain_mcp_proto::headers::is_valid_session_id(id) && !id.contains(',')
}

/// Reads the reply's `Mcp-Session-Id`: absent, one valid value, or an error.
pub(crate) fn session_id_of(map: &HeaderMap) -> Result<Option<String>, TransportError> {
    let mut values = map.get_all(MCP_SESSION_ID).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let bad = |why: &str| {
        TransportError::new(
            ErrorKind::InvalidSessionId,
            Delivery::Answered,
            format!("the reply's Mcp-Session-Id header {why}"),
        )
    };
    if values.next().is_some() {
        return Err(bad("is repeated"));
    }
    let text = first.to_str().map_err(|_| bad("is not visible ASCII"))?;
    if text.contains(',') {
        return Err(bad("holds several comma-joined values"));
    }
    if !is_valid_session_id(text) {
        return Err(bad("is empty or not visible ASCII"));
    }
    Ok(Some(text.to_owned()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_protocol_crate() {
        use brain_mcp_proto::headers as p;
        for (ours, theirs) in [
            (MCP_SESSION_ID, p::MCP_SESSION_ID),
            (MCP_PROTOCOL_VERSION, p::MCP_PROTOCOL_VERSION),
            (MCP_METHOD, p::MCP_METHOD),
            (MCP_NAME, p::MCP_NAME),
            (LAST_EVENT_ID, p::LAST_EVENT_ID),
        ] {
            assert_eq!(ours, theirs.to_ascii_lowercase());
        }
    }

    #[test]
    fn token_is_hidden_and_header_is_sensitive() {
        let h = McpHeaders {
            bearer: Some(BearerToken::new("s3cret")),
            session_id: Some("abc".into()),
            ..McpHeaders::default()
        };
        assert!(!format!("{h:?}").contains("s3cret"));
        assert!(!format!("{h:?}").contains("abc"));
        let mut map = HeaderMap::new();
        h.apply(&mut map).unwrap();
        assert!(map[AUTHORIZATION].is_sensitive());
        assert_eq!(map[AUTHORIZATION], "Bearer s3cret");
    }

    #[test]
    fn bad_values_name_the_header_only() {
        let h = McpHeaders {
            params: vec![("Mcp-Param-X".into(), "a\nb".into())],
            ..McpHeaders::default()
        };
        let err = h.apply(&mut HeaderMap::new()).unwrap_err();
        assert_eq!(err.delivery(), Delivery::NotSent);
        assert!(err.to_string().contains("Mcp-Param-X"));
        let h = McpHeaders {
            bearer: Some(BearerToken::new("zq9x\r\nzq9y")),
            ..McpHeaders::default()
        };
        let err = h.apply(&mut HeaderMap::new()).unwrap_err();
        assert!(!err.to_string().contains("zq9"));
    }

    #[test]
    fn session_id_validation() {
        let mut map = HeaderMap::new();
        assert_eq!(session_id_of(&map).unwrap(), None);
        map.insert(MCP_SESSION_ID, HeaderValue::from_static("a1-B2"));
        assert_eq!(session_id_of(&map).unwrap().as_deref(), Some("a1-B2"));
        map.insert(MCP_SESSION_ID, HeaderValue::from_static("a, a"));
        assert!(session_id_of(&map).is_err());
        map.insert(MCP_SESSION_ID, HeaderValue::from_static("a b"));
        assert!(session_id_of(&map).is_err());
        map.insert(MCP_SESSION_ID, HeaderValue::from_static("a"));
        map.append(MCP_SESSION_ID, HeaderValue::from_static("a"));
        assert_eq!(
            session_id_of(&map).unwrap_err().kind(),
            &ErrorKind::InvalidSessionId
        );
    }
}
