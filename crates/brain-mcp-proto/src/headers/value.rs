//! Encoding values for `Mcp-Name` and `Mcp-Param-*` headers.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// A header value with the base64 sentinel could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The text between the sentinels is not base64.
    #[error("header value has the base64 sentinel but invalid base64")]
    Base64,
    /// The decoded bytes are not UTF-8.
    #[error("base64 header value does not decode to UTF-8")]
    Utf8,
}

/// Plain values: printable ASCII (space allowed inside), no leading or
/// trailing space, and not starting like the sentinel.
fn is_plain(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().all(|b| (0x20..=0x7E).contains(b))
        && bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
        && !bytes
            .get(..PREFIX.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(PREFIX.as_bytes()))
}

/// Encodes a string for a header: as is when plain, otherwise as
/// `=?base64?<base64 of the UTF-8>?=`. The empty string stays empty.
pub fn encode_header_str(s: &str) -> String {
    if is_plain(s) {
        s.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(s.as_bytes()))
    }
}

/// Encodes an argument value for an `Mcp-Param-*` header: strings via
/// [`encode_header_str`], integers in decimal, booleans as `true`/`false`.
/// `null`, arrays and objects give `None` (send no header).
pub fn encode_header_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_header_str(s)),
        Value::Bool(b) => Some(if *b { "true" } else { "false" }.to_owned()),
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            // An integral float (e.g. 42.0) is sent as the integer it equals.
            (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{f:.0}"),
            _ => n.to_string(),
        }),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Reverses [`encode_header_str`]: decodes the sentinel form, returns plain
/// values unchanged.
pub fn decode_header_value(header: &str) -> Result<String, HeaderValueError> {
    match header
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    {
        Some(b64) => {
            let bytes = STANDARD
                .decode(b64.as_bytes())
                .map_err(|_| HeaderValueError::Base64)?;
            String::from_utf8(bytes).map_err(|_| HeaderValueError::Utf8)
        }
        None => Ok(header.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_values_pass_through() {
        assert_eq!(encode_header_str("us-west1"), "us-west1");
        assert_eq!(encode_header_str("us west 1"), "us west 1");
        assert_eq!(encode_header_str(""), "");
    }

    #[test]
    fn unsafe_values_use_the_sentinel() {
        for s in [
            "Hello, 世界",
            " padded ",
            " lead",
            "trail ",
            "line1\nline2",
            "a\r\nb",
            "\tindented",
            "=?base64?x?=",
        ] {
            let enc = encode_header_str(s);
            assert!(
                enc.starts_with("=?base64?") && enc.ends_with("?="),
                "{s:?} -> {enc}"
            );
            assert_eq!(decode_header_value(&enc).unwrap(), s);
        }
        assert_eq!(
            encode_header_str("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
    }

    #[test]
    fn scalars() {
        assert_eq!(encode_header_value(&json!(42)).as_deref(), Some("42"));
        assert_eq!(encode_header_value(&json!(-7)).as_deref(), Some("-7"));
        assert_eq!(encode_header_value(&json!(42.0)).as_deref(), Some("42"));
        assert_eq!(
            encode_header_value(&json!(u64::MAX)).as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(encode_header_value(&json!(false)).as_deref(), Some("false"));
        assert_eq!(encode_header_value(&json!(true)).as_deref(), Some("true"));
        assert_eq!(encode_header_value(&json!(null)), None);
        assert_eq!(encode_header_value(&json!([1])), None);
        assert_eq!(encode_header_value(&json!({})), None);
    }

    #[test]
    fn bad_sentinels() {
        assert_eq!(
            decode_header_value("=?base64?!!?="),
            Err(HeaderValueError::Base64)
        );
        assert_eq!(
            decode_header_value("=?base64?/w==?="),
            Err(HeaderValueError::Utf8)
        );
        assert_eq!(decode_header_value("plain").unwrap(), "plain");
    }
}
