//! The decisions of MCP authorization that need no IO: reading a server's challenge,
//! where to look for metadata and in which order, whether a document may be believed,
//! and which scopes to ask for. A driver fetches what these name and hands the answers
//! back; nothing here sends a request or holds a secret.
//!
//! The rules follow the MCP authorization chapter (2025-06-18 and later: protected
//! resource metadata, RFC 9728; authorization server metadata, RFC 8414 and OpenID
//! Connect Discovery) and, for 2025-03-26, its fallbacks ([`discovery::legacy`]).

pub mod challenge;
pub mod discovery;
pub mod scope;
pub mod url;

pub use challenge::{BearerChallenge, bearer};
pub use url::{HttpUrl, UrlError};

/// Why an authorization document is refused. The values a server wrote are cut to
/// [`FRAGMENT_LIMIT`](crate::text::FRAGMENT_LIMIT) bytes; like any peer text they pass
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
}
