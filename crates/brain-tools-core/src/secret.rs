//! Bearer tokens, read from the environment at call time and never printed.

use std::fmt;

use zeroize::Zeroizing;

/// A secret the policy layer carries (a bearer token read from `token_env`, a client
/// secret or key given in code). It has no `Display`; `Debug` prints `Secret(***)`; its
/// memory is zeroed when dropped; only [`Secret::expose`] reads it.
///
/// This layer knows nothing of MCP, so it cannot register the value with the MCP
/// layer's redaction step itself: the MCP layer turns every value it receives in one of
/// these into its own registered secret (`brain_mcp_proto::text::Secret`) before any
/// request is made with it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Wraps a token value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(Zeroizing::new(value.into()))
    }

    /// Reads the token from environment variable `var`.
    ///
    /// A variable that is unset, empty, not Unicode, or holds control characters (which
    /// could never be sent in an HTTP header) is an error. The error names the variable,
    /// never the value.
    pub fn from_env(var: &str) -> Result<Self, SecretError> {
        Self::from_lookup(var, std::env::var(var))
    }

    /// Applies the rules of [`Self::from_env`] to the result of looking `var` up.
    fn from_lookup(
        var: &str,
        lookup: Result<String, std::env::VarError>,
    ) -> Result<Self, SecretError> {
        match lookup {
            Ok(value) if value.is_empty() => Err(SecretError::Empty(var.to_owned())),
            Ok(value) if value.chars().any(char::is_control) => {
                drop(Zeroizing::new(value));
                Err(SecretError::ControlCharacters(var.to_owned()))
            }
            Ok(value) => Ok(Self(Zeroizing::new(value))),
            Err(std::env::VarError::NotPresent) => Err(SecretError::Missing(var.to_owned())),
            Err(std::env::VarError::NotUnicode(_)) => Err(SecretError::NotUnicode(var.to_owned())),
        }
    }

    /// The token value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Why a token could not be read. Names the variable only.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The variable is not set.
    #[error("environment variable {0} is not set")]
    Missing(String),
    /// The variable is set but empty.
    #[error("environment variable {0} is empty")]
    Empty(String),
    /// The variable's value is not valid Unicode.
    #[error("environment variable {0} is not valid Unicode")]
    NotUnicode(String),
    /// The value contains control characters such as a newline.
    #[error("environment variable {0} contains control characters")]
    ControlCharacters(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    // `std::env::set_var` needs `unsafe` in edition 2024, which the workspace forbids, so the
    // rules are tested through `from_lookup`, and `from_env` with variables cargo sets.

    #[test]
    fn debug_hides_the_value() {
        let secret = Secret::new("hunter2-token");
        assert_eq!(format!("{secret:?}"), "Secret(***)");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(Secret(***))");
        assert_eq!(secret.expose(), "hunter2-token");
    }

    #[test]
    fn missing_variable_is_an_error_naming_it() {
        let error = Secret::from_env("BRAIN_TOOLS_CORE_TEST_SURELY_UNSET_42").unwrap_err();
        assert_eq!(
            error.to_string(),
            "environment variable BRAIN_TOOLS_CORE_TEST_SURELY_UNSET_42 is not set"
        );
    }

    #[test]
    fn present_variable_is_read() {
        // Cargo sets this for every test run.
        let secret = Secret::from_env("CARGO_PKG_NAME").unwrap();
        assert_eq!(secret.expose(), "brain-tools-core");
    }

    #[test]
    fn empty_and_control_values_are_refused_without_showing_them() {
        let empty = Secret::from_lookup("TOKEN", Ok(String::new())).unwrap_err();
        assert_eq!(empty.to_string(), "environment variable TOKEN is empty");
        let newline = Secret::from_lookup("TOKEN", Ok("abc\n".to_owned())).unwrap_err();
        assert_eq!(
            newline.to_string(),
            "environment variable TOKEN contains control characters"
        );
        assert!(!format!("{newline:?}").contains("abc"));
        let ok = Secret::from_lookup("TOKEN", Ok("t0k".to_owned())).unwrap();
        assert_eq!(ok.expose(), "t0k");
    }
}
