//! The value rules of binding fields that are more than a JSON type.

/// The longest tool name a model sees; model APIs commonly allow 64.
pub(crate) const MAX_NAME_LEN: usize = 64;
/// The longest remote MCP tool name accepted.
pub(crate) const MAX_MCP_TOOL_LEN: usize = 256;
/// The longest environment variable name accepted for `token_env`.
pub(crate) const MAX_ENV_NAME_LEN: usize = 256;
/// Largest `timeout_seconds`: one day.
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 86_400;
/// Default `timeout_seconds`.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
/// Largest `max_output_bytes`: 64 MiB.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Default `max_output_bytes`: 1 MiB.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1024 * 1024;
/// The largest `max_in_flight`.
pub(crate) const MAX_IN_FLIGHT: u64 = 10_000;

/// Why a name breaks its rule. `Display` follows the field's name (`must be ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameError {
    /// A model-facing tool name outside 1 to 64 of `A-Z a-z 0-9 _ -`.
    #[error("must be 1 to {MAX_NAME_LEN} characters of A-Z, a-z, 0-9, _ and -")]
    ToolName,
    /// An empty remote tool name.
    #[error("must not be empty")]
    Empty,
    /// A remote tool name longer than [`MAX_MCP_TOOL_LEN`].
    #[error("must be at most {MAX_MCP_TOOL_LEN} characters")]
    TooLong,
    /// A remote tool name with control characters.
    #[error("must not contain control characters")]
    Control,
    /// Not an environment variable name.
    #[error("must be an environment variable name: a letter or _, then letters, digits and _")]
    EnvName,
}

/// Checks a model-facing tool name: 1 to 64 of `A-Z a-z 0-9 _ -`.
pub(crate) fn check_name(name: &str) -> Result<(), NameError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(NameError::ToolName)
    }
}

/// Checks a remote MCP tool name. Servers name tools freely (even with spaces), so only
/// emptiness, length and control characters are refused.
pub(crate) fn check_mcp_tool(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        Err(NameError::Empty)
    } else if name.chars().count() > MAX_MCP_TOOL_LEN {
        Err(NameError::TooLong)
    } else if name.chars().any(char::is_control) {
        Err(NameError::Control)
    } else {
        Ok(())
    }
}

/// Checks an environment variable name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn check_env_name(name: &str) -> Result<(), NameError> {
    let mut bytes = name.bytes();
    let valid = name.len() <= MAX_ENV_NAME_LEN
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(NameError::EnvName)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("docs_search").is_ok());
        assert!(check_name("a-B_9").is_ok());
        assert!(check_name(&"a".repeat(64)).is_ok());
        for bad in ["", "a b", "a.b", "ä", &"a".repeat(65)] {
            assert_eq!(
                check_name(bad).unwrap_err().to_string(),
                "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn mcp_tool_names_are_lenient() {
        assert!(check_mcp_tool("get tiny image").is_ok());
        assert!(check_mcp_tool("admin.tools.list").is_ok());
        assert_eq!(
            check_mcp_tool("").unwrap_err().to_string(),
            "must not be empty"
        );
        assert_eq!(
            check_mcp_tool("a\nb").unwrap_err().to_string(),
            "must not contain control characters"
        );
        assert_eq!(
            check_mcp_tool(&"x".repeat(257)).unwrap_err().to_string(),
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
}
