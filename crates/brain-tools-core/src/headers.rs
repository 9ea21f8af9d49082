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

/// Checks one extra header's name: an HTTP token (case does not matter) that the client
/// does not set itself.
pub fn check_header_name(name: &str) -> Result<(), String> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(
            "is not a valid header name: use letters, digits and !#$%&'*+-.^_`|~".to_owned(),
        );
    }
    let lower = name.to_ascii_lowercase();
    if lower == "authorization" {
        Err("is set by the client from token_env; a secret belongs there".to_owned())
    } else if HTTP_OWNED.contains(&lower.as_str()) {
        Err("is set by the HTTP client and cannot be given".to_owned())
    } else if lower.starts_with("mcp-") || MCP_OWNED.contains(&lower.as_str()) {
        Err("is set by the MCP client and cannot be given".to_owned())
    } else if lower.starts_with("proxy-") {
        Err("is for a proxy, which the client's proxy setting configures".to_owned())
    } else {
        Ok(())
    }
}

/// Checks one extra header's value: visible ASCII and spaces, not starting or ending with
/// a space (HTTP would drop those). The reason never repeats the value.
pub fn check_header_value(value: &str) -> Result<(), String> {
    if !value.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
        return Err(
            "must be visible ASCII characters and spaces (no line breaks or other control characters)"
                .to_owned(),
        );
    }
    if value.starts_with(' ') || value.ends_with(' ') {
        return Err("must not start or end with a space".to_owned());
    }
    Ok(())
}

/// Checks a whole set of extra headers as the config loader does: each name and value,
/// names unique ignoring case, at most [`MAX_HEADERS`] and [`MAX_HEADER_BYTES`]. The error
/// names the header (`header "X-Team": ...`), never a value.
pub fn check_headers(headers: &[(String, String)]) -> Result<(), String> {
    for (i, (name, value)) in headers.iter().enumerate() {
        let quoted = serde_json::Value::String(name.clone());
        check_header_name(name).map_err(|reason| format!("header {quoted} {reason}"))?;
        check_header_value(value).map_err(|reason| format!("header {quoted}: value {reason}"))?;
        if let Some((first, _)) = headers[..i]
            .iter()
            .find(|(other, _)| other.eq_ignore_ascii_case(name))
        {
            return Err(format!(
                "header {quoted} is given twice (as {:?} too; header names ignore case)",
                first
            ));
        }
    }
    check_totals(headers.len(), total_bytes(headers))
}

/// The bytes of names and values together.
pub(crate) fn total_bytes(headers: &[(String, String)]) -> usize {
    headers.iter().map(|(n, v)| n.len() + v.len()).sum()
}

/// The limits on a whole set of headers.
pub(crate) fn check_totals(count: usize, bytes: usize) -> Result<(), String> {
    if count > MAX_HEADERS {
        Err(format!("at most {MAX_HEADERS} headers are allowed"))
    } else if bytes > MAX_HEADER_BYTES {
        Err(format!(
            "header names and values together must be at most {MAX_HEADER_BYTES} bytes"
        ))
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
            let err = check_header_name(bad).unwrap_err();
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
                    .starts_with("must be visible ASCII")
            );
        }
        assert_eq!(
            check_header_value(" a").unwrap_err(),
            "must not start or end with a space"
        );
    }

    #[test]
    fn sets() {
        let h = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert!(check_headers(&[h("X-A", "1"), h("X-B", "2")]).is_ok());
        assert_eq!(
            check_headers(&[h("X-A", "1"), h("x-a", "2")]).unwrap_err(),
            "header \"x-a\" is given twice (as \"X-A\" too; header names ignore case)"
        );
        assert_eq!(
            check_headers(&[h("Mcp-Session-Id", "s3cret")]).unwrap_err(),
            "header \"Mcp-Session-Id\" is set by the MCP client and cannot be given"
        );
        let err = check_headers(&[h("X-A", "s3cret\n")]).unwrap_err();
        assert!(
            err.starts_with("header \"X-A\": value must be visible ASCII"),
            "{err}"
        );
        assert!(!err.contains("s3cret"));
        let many: Vec<_> = (0..33).map(|i| h(&format!("X-{i}"), "v")).collect();
        assert_eq!(
            check_headers(&many).unwrap_err(),
            "at most 32 headers are allowed"
        );
        let big = [h("X-A", &"v".repeat(8190))];
        assert_eq!(
            check_headers(&big).unwrap_err(),
            "header names and values together must be at most 8192 bytes"
        );
    }
}
