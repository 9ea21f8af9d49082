//! The decisions of MCP authorization that need no IO: reading a server's challenge,
//! where to look for metadata and in which order, whether a document may be believed,
//! and which scopes to ask for. A driver fetches what these name and hands the answers
//! back; nothing here sends a request or holds a secret.
//!
//! The rules follow the MCP authorization chapter (2025-06-18 and later: protected
//! resource metadata, RFC 9728; authorization server metadata, RFC 8414 and OpenID
//! Connect Discovery) and, for 2025-03-26, its fallbacks ([`discovery::legacy`]).

pub mod authority;
pub mod challenge;
pub mod code;
pub mod discovery;
pub mod dpop;
pub mod jwt;
pub mod lifetime;
pub mod metadata;
pub mod reach;
pub mod retry;
pub mod scope;
pub mod token;
pub mod url;

pub use authority::{Authority, Search, Step};
pub use challenge::{BearerChallenge, bearer};
pub use reach::{AddrClass, Destinations, Refused};
pub use token::{ClientAuth, Token};
pub use url::{HttpUrl, UrlError};

/// Why an authorization document is refused. The values a server wrote are cut to 256
/// bytes (an error code is shown only when it is one); like any peer text they pass
/// through the call's `Secrets` before they are shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The protected resource metadata names a resource the server is not.
    #[error(
        "the protected resource metadata is for {resource:?}, not for the server at {server:?}"
    )]
    ResourceMismatch {
        /// The metadata's `resource`.
        resource: String,
        /// The server's canonical URL.
        server: String,
    },
    /// An authorization server's metadata names another issuer than the one asked.
    #[error("the authorization server metadata names issuer {named:?}, not {expected:?}")]
    IssuerMismatch {
        /// The document's `issuer`.
        named: String,
        /// The issuer the document was fetched for.
        expected: String,
    },
    /// The server's metadata does not name the issuer this client is configured for, so
    /// its credentials stay unsent.
    #[error(
        "the server's metadata does not name the configured issuer {configured:?}; no credential was sent"
    )]
    IssuerNotListed {
        /// The configured issuer.
        configured: String,
    },
    /// The protected resource metadata names no usable authorization server.
    #[error("the protected resource metadata names no authorization server")]
    NoAuthorizationServer,
    /// No protected resource metadata could be read.
    #[error("no protected resource metadata could be read")]
    NoMetadata,
    /// None of the authorization server's metadata URLs answered with a document.
    #[error("no metadata could be read for the authorization server {issuer:?}")]
    NoServerMetadata {
        /// The issuer asked about.
        issuer: String,
    },
    /// A document was fetched but cannot be used.
    #[error("the {what} cannot be used: {why}")]
    Document {
        /// Which document.
        what: &'static str,
        /// Why, in words that repeat none of its content.
        why: &'static str,
    },
    /// The authorization server's metadata lists no endpoint the flow needs.
    #[error("the authorization server's metadata has no {endpoint}")]
    NoEndpoint {
        /// The missing endpoint's name.
        endpoint: &'static str,
    },
    /// The token endpoint accepts no client authentication this client can do.
    #[error("the token endpoint accepts no authentication method for {have}")]
    NoAuthMethod {
        /// What the client holds.
        have: &'static str,
    },
    /// The user (or the authorization server on their behalf) declined: the redirect
    /// back says `access_denied`.
    #[error(
        "the authorization response was refused: the authorization server answered access_denied"
    )]
    AccessDenied,
    /// The redirect back from the authorization server cannot be used.
    #[error("the authorization response was refused: {why}")]
    Redirect {
        /// Why, with the server's values cut.
        why: String,
    },
    /// The registration endpoint refused to register the client.
    #[error("the registration endpoint answered {status}")]
    RegistrationRefused {
        /// The HTTP status.
        status: u16,
    },
    /// A URL a document named cannot be used (not https to a remote host, or unsafe).
    #[error("the {what} URL {why}")]
    Url {
        /// Which URL.
        what: &'static str,
        /// Why.
        why: UrlError,
    },
    /// The token endpoint refused the request.
    #[error("the token endpoint answered {status}{}", error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default())]
    TokenRefused {
        /// The HTTP status.
        status: u16,
        /// The `error` code of the answer, if it had one.
        error: Option<String>,
    },
}
