//! The rule for a binding's extra headers (`headers` in the host config, and a managed
//! server's headers in code): static, non-secret values sent on every request to the
//! binding's server. Secrets belong in `token_env`.
//!
//! Names the HTTP or MCP client sets itself are refused, so a header can never change how
//! a request is framed, which session it belongs to, or where a token goes. Messages never
//! repeat a value.

/// The most extra headers one binding may send.
pub const MAX_HEADERS: usize = 32;
/// The most bytes of extra header names and values of one binding, together.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Header names the HTTP client sets (lower case).
const HTTP_OWNED: &[&str] = &[
    "host",
    "content-type",
    "content-length",
    "accept",
    "connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "expect",
];

/// Header names the MCP client sets, besides every `Mcp-*` name (lower case).
const MCP_OWNED: &[&str] = &["last-event-id"];

/// Why an extra header is refused. `Display` says what is wrong, never the value: a
/// name's reasons follow the name (`is set by ...`), a value's follow "value".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// Not an HTTP token.
    #[error("is not a valid header name: use letters, digits and !#$%&'*+-.^_`|~")]
    BadName,
    /// `Authorization`: the token belongs in `token_env`.
    #[error("is set by the client from token_env; a secret belongs there")]
    Authorization,
    /// A name the HTTP client sets.
    #[error("is set by the HTTP client and cannot be given")]
    HttpOwned,
    /// A name the MCP client sets (`Mcp-*`, `Last-Event-ID`).
    #[error("is set by the MCP client and cannot be given")]
    McpOwned,
    /// A `Proxy-*` name: the client's proxy setting configures proxies.
    #[error("is for a proxy, which the client's proxy setting configures")]
    Proxy,
    /// A value with a character HTTP cannot carry.
    #[error(
        "must be visible ASCII characters and spaces (no line breaks or other control characters)"
    )]
    BadValue,
    /// A value that starts or ends with a space.
    #[error("must not start or end with a space")]
    EdgeSpace,
    /// A name given twice (header names ignore case).
    #[error("is given twice (as {0:?} too; header names ignore case)")]
    Twice(String),
    /// More than [`MAX_HEADERS`].
    #[error("at most {MAX_HEADERS} headers are allowed")]
    TooMany,
    /// More than [`MAX_HEADER_BYTES`] of names and values.
    #[error("header names and values together must be at most {MAX_HEADER_BYTES} bytes")]
    TooLarge,
}

/// A header of a set that breaks the rule: which one, and why (`Display`:
/// `header "X-Team" is ...`, `header "X-Team": value must ...`, or the set's limit).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadersError {
    /// The header with this name breaks the rule for names.
    #[error("header {} {}", quoted(.0), .1)]
    Name(String, HeaderError),
    /// The header with this name has a value that breaks the rule for values.
    #[error("header {}: value {}", quoted(.0), .1)]
    Value(String, HeaderError),
    /// The header with this name is given twice.
    #[error("header {} {}", quoted(.0), .1)]
    Twice(String, HeaderError),
    /// The set is too large.
    #[error("{0}")]
    Limits(HeaderError),
}

/// A header's name as JSON writes it (quoted, escaped): names may be any text in a config.
fn quoted(name: &str) -> String {
    serde_json::Value::String(name.to_owned()).to_string()
}

/// Checks one extra header's name: an HTTP token (case does not matter) that the client
/// does not set itself.
pub fn check_header_name(name: &str) -> Result<(), HeaderError> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(HeaderError::BadName);
    }
    let lower = name.to_ascii_lowercase();
    if lower == "authorization" {
        Err(HeaderError::Authorization)
    } else if HTTP_OWNED.contains(&lower.as_str()) {
        Err(HeaderError::HttpOwned)
    } else if lower.starts_with("mcp-") || MCP_OWNED.contains(&lower.as_str()) {
        Err(HeaderError::McpOwned)
    } else if lower.starts_with("proxy-") {
        Err(HeaderError::Proxy)
    } else {
        Ok(())
    }
}

/// Checks one extra header's value: visible ASCII and spaces, not starting or ending with
/// a space (HTTP would drop those). The reason never repeats the value.
pub fn check_header_value(value: &str) -> Result<(), HeaderError> {
    if !value.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
        return Err(HeaderError::BadValue);
    }
    if value.starts_with(' ') || value.ends_with(' ') {
        return Err(HeaderError::EdgeSpace);
    }
    Ok(())
}

/// Checks a whole set of extra headers as the config loader does: each name and value,
/// names unique ignoring case, at most [`MAX_HEADERS`] and [`MAX_HEADER_BYTES`]. The error
/// names the header (`header "X-Team": ...`), never a value.
pub fn check_headers(headers: &[(String, String)]) -> Result<(), HeadersError> {
    for (i, (name, value)) in headers.iter().enumerate() {
        check_header_name(name).map_err(|why| HeadersError::Name(name.clone(), why))?;
        check_header_value(value).map_err(|why| HeadersError::Value(name.clone(), why))?;
        if let Some((first, _)) = headers[..i]
            .iter()
            .find(|(other, _)| other.eq_ignore_ascii_case(name))
        {
            return Err(HeadersError::Twice(
                name.clone(),
                HeaderError::Twice(first.clone()),
            ));
        }
    }
    check_totals(headers.len(), total_bytes(headers)).map_err(HeadersError::Limits)
}

/// The bytes of names and values together.
pub(crate) fn total_bytes(headers: &[(String, String)]) -> usize {
    headers.iter().map(|(n, v)| n.len() + v.len()).sum()
}

/// The limits on a whole set of headers.
pub(crate) fn check_totals(count: usize, bytes: usize) -> Result<(), HeaderError> {
    if count > MAX_HEADERS {
        Err(HeaderError::TooMany)
    } else if bytes > MAX_HEADER_BYTES {
        Err(HeaderError::TooLarge)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in [
            "X-Team",
            "x-request-source",
            "Cookie",
            "User-Agent",
            "a.b~c",
        ] {
            assert!(check_header_name(good).is_ok(), "{good}");
        }
        for (bad, reason) in [
            ("", "is not a valid header name"),
            ("X Team", "is not a valid header name"),
            ("X:Team", "is not a valid header name"),
            ("Ä", "is not a valid header name"),
            ("authorization", "is set by the client from token_env"),
            ("HOST", "is set by the HTTP client"),
            ("Transfer-Encoding", "is set by the HTTP client"),
            ("MCP-Protocol-Version", "is set by the MCP client"),
            ("mcp-param-region", "is set by the MCP client"),
            ("Last-Event-ID", "is set by the MCP client"),
            ("Proxy-Authorization", "is for a proxy"),
        ] {
            let err = check_header_name(bad).unwrap_err().to_string();
            assert!(err.starts_with(reason), "{bad}: {err}");
        }
    }

    #[test]
    fn values() {
        for good in ["", "a", "a b", "~!@#$%^&*()"] {
            assert!(check_header_value(good).is_ok(), "{good:?}");
        }
        for bad in ["a\r\nX: y", "a\tb", "é", "\u{7f}"] {
            assert!(
                check_header_value(bad)
                    .unwrap_err()
                    .to_string()
                    .starts_with("must be visible ASCII")
            );
        }
        assert_eq!(
            check_header_value(" a").unwrap_err().to_string(),
            "must not start or end with a space"
        );
    }

    #[test]
    fn sets() {
        let h = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert!(check_headers(&[h("X-A", "1"), h("X-B", "2")]).is_ok());
        assert_eq!(
            check_headers(&[h("X-A", "1"), h("x-a", "2")])
                .unwrap_err()
                .to_string(),
            "header \"x-a\" is given twice (as \"X-A\" too; header names ignore case)"
        );
        assert_eq!(
            check_headers(&[h("Mcp-Session-Id", "s3cret")])
                .unwrap_err()
                .to_string(),
            "header \"Mcp-Session-Id\" is set by the MCP client and cannot be given"
        );
        let err = check_headers(&[h("X-A", "s3cret\n")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("header \"X-A\": value must be visible ASCII"),
            "{err}"
        );
        assert!(!err.contains("s3cret"));
        let many: Vec<_> = (0..33).map(|i| h(&format!("X-{i}"), "v")).collect();
        assert_eq!(
            check_headers(&many).unwrap_err().to_string(),
            "at most 32 headers are allowed"
        );
        let big = [h("X-A", &"v".repeat(8190))];
        assert_eq!(
            check_headers(&big).unwrap_err().to_string(),
            "header names and values together must be at most 8192 bytes"
        );
    }
}
