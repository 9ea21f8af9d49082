//! Why no token could be had for a server, and whose fault it was. The call fails as
//! `authorization_failed`, and the tool did not run: nothing was sent to the MCP server,
//! or only a request it refused for its token.

/// Whose fault it is that no token could be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthFault {
    /// The host's configuration: credentials unset or unreadable, a scope or an
    /// authorization server they do not name.
    Config,
    /// The authorization server, or a document on the way to it: unreachable, refusing,
    /// or not as the specifications say.
    AuthorizationServer,
    /// The MCP server itself refused every token it was given (401/403 after a fresh
    /// one, or past the rounds the core allows).
    ResourceServer,
    /// The user, or the host's authorization handler, did not approve.
    Declined,
    /// This host could not do its own part (no randomness, a signature that failed).
    Host,
    /// The host's token store (down, slow, a row it cannot read): no token is fetched
    /// around it, since a refresh outside its lease could get the grant revoked.
    Store,
}

/// Why no token could be had: whose fault, and a message (never a secret) saying what
/// happened. `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AuthFailure {
    fault: AuthFault,
    message: String,
}

impl AuthFault {
    /// The name events give it: `config`, `authorization_server`, `resource_server`,
    /// `declined`, `host`, `token_store`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::AuthorizationServer => "authorization_server",
            Self::ResourceServer => "resource_server",
            Self::Declined => "declined",
            Self::Host => "host",
            Self::Store => "token_store",
        }
    }
}

impl AuthFailure {
    /// The host's configuration is at fault.
    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(AuthFault::Config, message)
    }

    /// The MCP server refused the tokens it was given.
    pub(crate) fn resource_server(message: impl Into<String>) -> Self {
        Self::new(AuthFault::ResourceServer, message)
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

    /// The host's token store failed.
    pub(crate) fn store(message: impl Into<String>) -> Self {
        Self::new(AuthFault::Store, message)
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
