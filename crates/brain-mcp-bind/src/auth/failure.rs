//! Why no token could be had for a server, and whose fault it was. Whatever the reason, the
//! MCP server was sent nothing: the call fails as `authorization_failed`.

/// Whose fault it is that no token could be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthFault {
    /// The host's configuration: credentials unset or unreadable, a scope or an
    /// authorization server they do not name.
    Config,
    /// The authorization server, or a document on the way to it: unreachable, refusing,
    /// or not as the specifications say.
    AuthorizationServer,
    /// The user, or the host's authorization handler, did not approve.
    Declined,
    /// This host could not do its own part (no randomness, a signature that failed).
    Host,
}

/// Why no token could be had: whose fault, and a message (never a secret) saying what
/// happened. `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AuthFailure {
    fault: AuthFault,
    message: String,
}

impl AuthFault {
    /// The name events give it: `config`, `authorization_server`, `declined`, `host`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::AuthorizationServer => "authorization_server",
            Self::Declined => "declined",
            Self::Host => "host",
        }
    }
}

impl AuthFailure {
    /// The host's configuration is at fault.
    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(AuthFault::Config, message)
    }

    /// The authorization server (or its documents) is at fault.
    pub(crate) fn server(message: impl Into<String>) -> Self {
        Self::new(AuthFault::AuthorizationServer, message)
    }

    /// The user or the host's handler declined.
    pub(crate) fn declined(message: impl Into<String>) -> Self {
        Self::new(AuthFault::Declined, message)
    }

    /// This host failed at its own part.
    pub(crate) fn host(message: impl Into<String>) -> Self {
        Self::new(AuthFault::Host, message)
    }

    fn new(fault: AuthFault, message: impl Into<String>) -> Self {
        Self {
            fault,
            message: message.into(),
        }
    }

    /// Whose fault it is.
    pub(crate) fn fault(&self) -> AuthFault {
        self.fault
    }

    /// The same failure, its message prefixed with `context` (`"authorization: "`).
    pub(crate) fn within(self, context: &str) -> Self {
        Self {
            message: format!("{context}{}", self.message),
            ..self
        }
    }
}

impl std::fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AuthFailure {}
