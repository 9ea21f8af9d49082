//! The value rules of binding fields that are more than a JSON type.

/// The longest tool name a model sees; model APIs commonly allow 64.
pub(crate) const MAX_NAME_LEN: usize = 64;
/// The longest remote MCP tool name accepted.
pub(crate) const MAX_MCP_TOOL_LEN: usize = 256;
/// The longest environment variable name accepted for `token_env`.
pub(crate) const MAX_ENV_NAME_LEN: usize = 256;
/// The longest URL accepted.
pub(crate) const MAX_URL_LEN: usize = 2048;
/// Largest `timeout_seconds`: one day.
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 86_400;
/// Default `timeout_seconds`.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
/// Largest `max_output_bytes`: 64 MiB.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Default `max_output_bytes`: 1 MiB.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1024 * 1024;

/// Checks a model-facing tool name: 1 to 64 of `A-Z a-z 0-9 _ -`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "must be 1 to {MAX_NAME_LEN} characters of A-Z, a-z, 0-9, _ and -"
        ))
    }
}

/// Checks a remote MCP tool name. Servers name tools freely (even with spaces), so only
/// emptiness, length and control characters are refused.
pub(crate) fn check_mcp_tool(name: &str) -> Result<(), String> {
    if name.is_empty() {
        Err("must not be empty".to_owned())
    } else if name.chars().count() > MAX_MCP_TOOL_LEN {
        Err(format!("must be at most {MAX_MCP_TOOL_LEN} characters"))
    } else if name.chars().any(char::is_control) {
        Err("must not contain control characters".to_owned())
    } else {
        Ok(())
    }
}

/// Checks an environment variable name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn check_env_name(name: &str) -> Result<(), String> {
    let mut bytes = name.bytes();
    let valid = name.len() <= MAX_ENV_NAME_LEN
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(
            "must be an environment variable name: a letter or _, then letters, digits and _"
                .to_owned(),
        )
    }
}

/// Checks an endpoint URL: `http` or `https`, a host, no credentials, no fragment.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    if url.len() > MAX_URL_LEN {
        return Err(format!("must be at most {MAX_URL_LEN} bytes"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain whitespace or control characters".to_owned());
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("must be an http or https URL".to_owned());
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err("must be an http or https URL".to_owned());
    }
    if rest.contains('#') {
        return Err("must not have a fragment".to_owned());
    }
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err("must not contain credentials; use token_env".to_owned());
    }
    let (host, port) = split_host_port(authority)?;
    if host.is_empty() {
        return Err("must have a host".to_owned());
    }
    if let Some(port) = port
        && !matches!(port.parse::<u16>(), Ok(1..))
    {
        return Err("must have a port between 1 and 65535".to_owned());
    }
    Ok(())
}

fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = authority.strip_prefix('[') {
        // An IPv6 literal: `[::1]` or `[::1]:8080`.
        let Some((host, after)) = rest.split_once(']') else {
            return Err("must have a valid host".to_owned());
        };
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err("must have a valid host".to_owned());
        }
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err("must have a valid host".to_owned()),
            },
        };
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let host_ok = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '%') || !c.is_ascii());
    if host_ok {
        Ok((host, port))
    } else {
        Err("must have a valid host".to_owned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("docs_search").is_ok());
        assert!(check_name("a-B_9").is_ok());
        assert!(check_name(&"a".repeat(64)).is_ok());
        for bad in ["", "a b", "a.b", "ä", &"a".repeat(65)] {
            assert_eq!(
                check_name(bad).unwrap_err(),
                "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn mcp_tool_names_are_lenient() {
        assert!(check_mcp_tool("get tiny image").is_ok());
        assert!(check_mcp_tool("admin.tools.list").is_ok());
        assert_eq!(check_mcp_tool("").unwrap_err(), "must not be empty");
        assert_eq!(
            check_mcp_tool("a\nb").unwrap_err(),
            "must not contain control characters"
        );
        assert_eq!(
            check_mcp_tool(&"x".repeat(257)).unwrap_err(),
            "must be at most 256 characters"
        );
    }

    #[test]
    fn env_names() {
        for good in ["MCP_API_KEY", "_X", "a1"] {
            assert!(check_env_name(good).is_ok(), "{good}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B", "$A"] {
            assert!(check_env_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls() {
        for good in [
            "https://example.com/mcp",
            "http://127.0.0.1:8080/mcp",
            "HTTPS://Example.com",
            "http://[::1]:3000/mcp?x=1",
            "http://localhost",
        ] {
            assert_eq!(check_url(good), Ok(()), "{good}");
        }
        let cases = [
            ("ftp://example.com", "must be an http or https URL"),
            ("example.com/mcp", "must be an http or https URL"),
            ("file:///etc/passwd", "must be an http or https URL"),
            ("https://", "must have a host"),
            ("https:///mcp", "must have a host"),
            (
                "https://u:p@example.com",
                "must not contain credentials; use token_env",
            ),
            ("https://example.com/a#b", "must not have a fragment"),
            (
                "https://example.com:0/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:99999/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://example.com:x/",
                "must have a port between 1 and 65535",
            ),
            (
                "https://exa mple.com",
                "must not contain whitespace or control characters",
            ),
            ("https://exa<mple.com", "must have a valid host"),
            ("http://[zz]/", "must have a valid host"),
        ];
        for (url, reason) in cases {
            assert_eq!(check_url(url).unwrap_err(), reason, "{url}");
        }
    }
}
