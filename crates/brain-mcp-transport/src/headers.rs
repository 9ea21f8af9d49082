//! MCP request headers, the bearer token, and session id validation.

use brain_mcp_proto::text::Secret;
use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use brain_mcp_proto::client::Header;
use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::error::{Delivery, ErrorKind, TransportError};

// The MCP header names are the core's (`brain_mcp_proto::headers`), lower case so they
// serve as static `HeaderName`s.
pub(crate) use brain_mcp_proto::headers::{LAST_EVENT_ID, MCP_SESSION_ID};

/// A bearer token: a [`Secret`], so it is known to the redaction step from the moment it
/// is made. `Debug` shows `***`; the value is only read when the `Authorization` header
/// is built, and that header is marked sensitive.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(Secret, Scheme);

/// How an access token is presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    Bearer,
    /// `Authorization: DPoP` (RFC 9449 §7.1); the caller adds the request's proof.
    Dpop,
}

/// The `DPoP` request header (RFC 9449 §4.1), which carries a proof.
pub const DPOP: &str = "dpop";
/// The `DPoP-Nonce` response header (RFC 9449 §8, §9).
pub const DPOP_NONCE: &str = "dpop-nonce";

impl BearerToken {
    /// Wraps a token (without the `Bearer ` prefix), registering it as a secret.
    pub fn new(token: impl Into<String>) -> Self {
        Self(Secret::new(token), Scheme::Bearer)
    }

    /// The token a secret already holds.
    pub fn from_secret(token: Secret) -> Self {
        Self(token, Scheme::Bearer)
    }

    /// A DPoP-bound token (RFC 9449): sent as `Authorization: DPoP <token>`, each request
    /// with a proof of its own in the `DPoP` header, which the caller adds.
    pub fn dpop_bound(token: Secret) -> Self {
        Self(token, Scheme::Dpop)
    }

    /// Whether it is DPoP-bound (each request needs a proof).
    pub fn is_dpop(&self) -> bool {
        self.1 == Scheme::Dpop
    }

    /// The token itself; take care not to log it.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(***)")
    }
}

/// Writes `headers` and the bearer token into `map`. Errors name the header, never its
/// value. A value marked sensitive, and the `Authorization` header, are marked sensitive
/// for hyper too (kept out of its debug output and never indexed by h2's HPACK).
pub(crate) fn apply(
    headers: &[Header],
    bearer: Option<&BearerToken>,
    map: &mut HeaderMap,
) -> Result<(), TransportError> {
    for header in headers {
        // A fixed name (the core's own) is used in place, without a copy; the core's
        // usual ones are parsed once.
        let fixed = match &header.name {
            Cow::Borrowed(name) => Some(*name),
            Cow::Owned(_) => None,
        };
        let name = match (fixed.and_then(known), fixed) {
            (Some(known), _) => known,
            (None, Some(name)) if is_plain_name(name) => HeaderName::from_static(name),
            _ => HeaderName::from_bytes(header.name.as_bytes())
                .map_err(|_| invalid(format!("`{}` is not a valid header name", header.name)))?,
        };
        let mut value = match &header.value {
            Cow::Borrowed(value) if is_plain_value(value) => HeaderValue::from_static(value),
            value => value_of(&header.name, value)?,
        };
        value.set_sensitive(header.sensitive);
        map.insert(name, value);
    }
    if let Some(token) = bearer {
        let scheme = match token.1 {
            Scheme::Bearer => "Bearer",
            Scheme::Dpop => "DPoP",
        };
        let mut v =
            HeaderValue::from_str(&format!("{scheme} {}", token.expose())).map_err(|_| {
                invalid("the bearer token contains characters not allowed in a header".into())
            })?;
        v.set_sensitive(true);
        map.insert(AUTHORIZATION, v);
    }
    Ok(())
}

/// The names the core sends with nearly every message, parsed once (parsing checks each
/// byte and looks for a standard header of that name: about 140 instructions a header).
fn known(name: &str) -> Option<HeaderName> {
    static NAMES: LazyLock<[(&str, HeaderName); 4]> = LazyLock::new(|| {
        brain_mcp_proto::headers::FIXED.map(|name| (name, HeaderName::from_static(name)))
    });
    let (_, known) = NAMES.iter().find(|(known, _)| *known == name)?;
    Some(known.clone())
}

/// Whether [`HeaderName::from_static`] takes `name` (lower-case letters, digits and `-`,
/// short): checked first, since it panics on anything else.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether [`HeaderValue::from_static`] takes `value` (visible ASCII and spaces): checked
/// first, since it panics on anything else.
fn is_plain_value(value: &str) -> bool {
    value.bytes().all(|b| (0x20..0x7f).contains(&b))
}

fn value_of(name: &str, value: &str) -> Result<HeaderValue, TransportError> {
    HeaderValue::from_str(value)
        .map_err(|_| invalid(format!("the value of `{name}` is not a valid header value")))
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

/// A `DPoP-Nonce` a server sent, kept only when it is a nonce by RFC 9449's rule (the
/// core's `dpop::nonce`: visible ASCII without quotes or backslashes, bounded) and holds
/// none of the exchange's `secrets`: a server that reflects a token as its nonce gets
/// nothing kept, shown or sent back.
pub(crate) fn dpop_nonce(
    value: Option<&str>,
    secrets: &brain_mcp_proto::text::Secrets,
) -> Option<String> {
    let nonce = brain_mcp_proto::auth::dpop::nonce(value?)?;
    matches!(secrets.redact(nonce), Cow::Borrowed(_)).then(|| nonce.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_names_parsed_once_are_the_names_it_sends() {
        use brain_mcp_proto::headers as p;
        for name in p::FIXED.into_iter().chain([LAST_EVENT_ID]) {
            // A static `HeaderName` panics on anything but a lower-case token.
            assert!(HeaderName::from_bytes(name.as_bytes()).is_ok_and(|h| h == name));
        }
        for name in p::FIXED {
            assert_eq!(
                known(name),
                HeaderName::from_bytes(name.as_bytes()).ok(),
                "{name}"
            );
        }
        assert_eq!(known("mcp-param-x"), None);
        assert_eq!(
            known("Mcp-Method"),
            None,
            "the core sends its names in lower case"
        );
    }

    #[test]
    fn token_and_sensitive_values_are_marked() {
        let headers = [
            Header::sensitive("mcp-session-id", "abc"),
            Header::new("mcp-method", "x"),
        ];
        let mut map = HeaderMap::new();
        apply(&headers, Some(&BearerToken::new("s3cret")), &mut map).unwrap();
        assert!(map[AUTHORIZATION].is_sensitive());
        assert_eq!(map[AUTHORIZATION], "Bearer s3cret");
        assert!(map["mcp-session-id"].is_sensitive());
        assert!(!map["mcp-method"].is_sensitive());
        assert!(!format!("{:?}", BearerToken::new("s3cret")).contains("s3cret"));
    }

    #[test]
    fn fixed_and_built_headers_are_checked_alike() {
        // Borrowed names and values take the no-copy path only when it cannot panic;
        // anything else is checked as an owned one would be.
        let cases: [(Header, bool); 8] = [
            (Header::new("mcp-method", "tools/call"), true),
            (Header::new("mcp-method", String::from("tools/call")), true),
            (Header::new("x-a", "with space and ~"), true),
            (Header::new("Upper-Name", "v"), true),
            (Header::new("bad name", "v"), false),
            (Header::new("", "v"), false),
            (Header::new("x-a", "line\nbreak"), false),
            (Header::new("x-a", "caf\u{e9}"), true),
        ];
        for (header, ok) in cases {
            let mut map = HeaderMap::new();
            let applied = apply(std::slice::from_ref(&header), None, &mut map);
            assert_eq!(applied.is_ok(), ok, "{header:?}");
            if ok {
                let name = header.name.to_ascii_lowercase();
                assert_eq!(map[name.as_str()], header.value.as_ref());
            }
        }
    }

    #[test]
    fn bad_values_name_the_header_only() {
        let headers = [Header::new("Mcp-Param-X", "a\nb")];
        let err = apply(&headers, None, &mut HeaderMap::new()).unwrap_err();
        assert_eq!(err.delivery(), Delivery::NotSent);
        assert!(err.to_string().contains("Mcp-Param-X"));
        let err = apply(
            &[],
            Some(&BearerToken::new("zq9x\r\nzq9y")),
            &mut HeaderMap::new(),
        )
        .unwrap_err();
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
        assert!(session_id_of(&map).unwrap_err().is_invalid_session_id());
    }

    #[test]
    fn a_nonce_is_kept_only_when_it_is_one_and_holds_no_secret() {
        use brain_mcp_proto::text::Secrets;
        let secrets = Secrets::none().with(["tok-SECRET-123"]);
        assert_eq!(dpop_nonce(Some("n-1"), &secrets).as_deref(), Some("n-1"));
        assert_eq!(dpop_nonce(Some("tok-SECRET-123"), &secrets), None);
        assert_eq!(dpop_nonce(Some("a\"b"), &secrets), None);
        assert_eq!(dpop_nonce(Some(&"n".repeat(4096)), &secrets), None);
        assert_eq!(dpop_nonce(None, &secrets), None);
    }
}
