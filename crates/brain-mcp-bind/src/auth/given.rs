//! Credentials given in code rather than named in a config: what an embedder hands the
//! host per tenant and server, and what the conformance runner and `mcp-tools` use.

use async_trait::async_trait;
use brain_mcp_proto::text::Secrets;
use brain_tools_core::{ClientSecret, OAuthConfig, Secret};

/// How a client proves who it is at a token endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientProof {
    /// A shared secret (`client_secret_basic` or `client_secret_post`, as the server allows).
    Secret(Secret),
    /// A PEM private key, P-256 or RSA, PKCS #8 (`private_key_jwt`, ES256 or RS256).
    PrivateKeyPem(Secret),
    /// The secret or key in this environment variable, read when a token is needed.
    Env(ClientSecret),
}

/// OAuth client credentials for the client credentials grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthClient {
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: String,
    pub(crate) proof: ClientProof,
    pub(crate) scopes: Vec<String>,
}

impl OAuthClient {
    /// A client whose credentials go to `issuer` only: a server whose metadata names
    /// another authorization server is refused before anything is sent.
    pub fn pinned(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        proof: ClientProof,
    ) -> Self {
        Self {
            issuer: Some(issuer.into()),
            client_id: client_id.into(),
            proof,
            scopes: Vec::new(),
        }
    }

    /// A client that trusts whichever authorization server the server's metadata names.
    /// Only for a person reviewing the result (`mcp-tools` prints the issuer it found) or
    /// a test suite: a server could otherwise collect the secret.
    pub fn trusting_server_metadata(client_id: impl Into<String>, proof: ClientProof) -> Self {
        Self {
            issuer: None,
            client_id: client_id.into(),
            proof,
            scopes: Vec::new(),
        }
    }

    /// These credentials asking for `scopes` (none: the server's challenge or metadata
    /// decides).
    pub fn with_scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = scopes;
        self
    }

    /// The credentials of a binding's `oauth` block.
    pub fn from_config(config: &OAuthConfig) -> Self {
        Self::pinned(
            config.issuer(),
            config.client_id(),
            ClientProof::Env(config.secret().clone()),
        )
        .with_scopes(config.scopes().to_vec())
    }

    /// The secrets given in code (a client secret or key; not one read from the
    /// environment later), to remove from everything shown.
    pub(crate) fn secrets(&self) -> Secrets {
        match &self.proof {
            ClientProof::Secret(s) | ClientProof::PrivateKeyPem(s) => Secrets::new([s.expose()]),
            _ => Secrets::none(),
        }
    }

    /// The pinned issuer, if any.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client's identifier.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// What a call to a server authenticates with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credential {
    /// The binding's own (`token_env`, `oauth`, or nothing).
    FromBinding,
    /// This bearer token.
    Bearer(Secret),
    /// Tokens got with these client credentials.
    OAuth(OAuthClient),
    /// The tenant may not use the server: the call fails before anything is sent.
    NotAuthorized,
}

/// Where an embedder's credentials come from: asked before each call with the tenant
/// and the server's URL. Rotation takes effect at the next call; tokens got with the
/// same client credentials are shared and renewed by the client.
#[async_trait]
pub trait CredentialSource: Send + Sync + 'static {
    /// The credential for `tenant`'s call to the server at `server_url`.
    async fn credential(&self, tenant: &str, server_url: &str) -> Credential;
}
