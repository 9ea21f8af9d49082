//! Credentials given in code rather than named in a config: what an embedder hands the
//! host per tenant and server, and what the conformance runner and `mcp-tools` use.

use std::sync::Arc;

use async_trait::async_trait;

use super::store::TokenStore;
use brain_mcp_proto::auth::token::SubjectType;
use brain_mcp_proto::auth::url::same_issuer;
use brain_mcp_proto::text::Secrets;
use brain_tools_core::{EndpointUrl, OAuthConfig, Secret, SecretVar};

/// Registers every form of a client's proof with the redaction step: a secret, its
/// Basic pair and that pair's base64 (with `client_id`); a PEM key, whole and each line
/// of its body.
pub(crate) fn learn_proof(client_id: Option<&str>, value: &str, is_key: bool) {
    if is_key {
        brain_mcp_proto::text::learn(value);
        for line in value.lines().filter(|l| !l.starts_with("-----")) {
            brain_mcp_proto::text::learn(line.trim());
        }
    } else if let Some(id) = client_id {
        brain_mcp_proto::text::learn_basic(id, value);
    } else {
        brain_mcp_proto::text::learn(value);
    }
}

/// How a client proves who it is at a token endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientProof {
    /// A shared secret (`client_secret_basic` or `client_secret_post`, as the server allows).
    Secret(Secret),
    /// A PEM private key, P-256 or RSA, PKCS #8 (`private_key_jwt`, ES256 or RS256).
    PrivateKeyPem(Secret),
    /// The secret, key or workload token in this environment variable (or, for a
    /// workload token, this file), read when a token is needed.
    Env(SecretVar),
    /// A JWT the platform issued to the workload, presented as a JWT bearer grant
    /// (RFC 7523 §2.1, workload identity federation) in place of the client credentials
    /// grant; the client authenticates with its id alone.
    WorkloadJwt(Secret),
}

impl ClientProof {
    /// Whether it is a workload token (the JWT bearer grant).
    pub(crate) fn is_workload(&self) -> bool {
        match self {
            Self::WorkloadJwt(_) => true,
            Self::Env(var) => var.is_workload(),
            _ => false,
        }
    }
}

/// An enterprise user's identity, as the enterprise's identity provider asserted it
/// (SEP-990, enterprise-managed authorization): Brain exchanges it at the identity
/// provider's token endpoint (RFC 8693) for an ID-JAG meant for the MCP server's
/// authorization server, and redeems that there with the JWT bearer grant, the client
/// authenticating as usual. The assertion goes to that token endpoint only. Its `Debug`
/// shows the endpoint and client id, never the assertion or secret.
#[derive(Clone, PartialEq, Eq)]
pub struct IdentityAssertion {
    pub(crate) token_endpoint: String,
    pub(crate) assertion: Secret,
    pub(crate) kind: SubjectType,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<Secret>,
}

impl std::fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityAssertion")
            .field("token_endpoint", &self.token_endpoint)
            .field("kind", &self.kind)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityAssertion {
    /// An OpenID Connect ID token the identity provider whose token endpoint is
    /// `token_endpoint` issued.
    pub fn id_token(token_endpoint: impl Into<String>, id_token: Secret) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            assertion: id_token,
            kind: SubjectType::IdToken,
            client_id: None,
            client_secret: None,
        }
    }

    /// A SAML 2.0 assertion (base64url) the identity provider whose token endpoint is
    /// `token_endpoint` issued.
    pub fn saml2(token_endpoint: impl Into<String>, assertion: Secret) -> Self {
        Self {
            kind: SubjectType::Saml2,
            ..Self::id_token(token_endpoint, assertion)
        }
    }

    /// Who the client is at the identity provider: its id there, and its secret if it
    /// has one (sent as `client_secret_post`).
    #[must_use]
    pub fn with_idp_client(mut self, client_id: impl Into<String>, secret: Option<Secret>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret;
        self
    }
}

/// What a host shows a user so they can approve access, and where the answer comes back.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthorizationPrompt {
    /// The authorization URL to send the user to.
    pub url: String,
    /// The redirect URI the authorization server sends the user back to.
    pub redirect_uri: String,
    /// The MCP server the access is for.
    pub server_url: String,
    /// Whose access it is ([`OAuthClient::for_principal`]), if said.
    pub principal: Option<String>,
}

/// The half of the authorization code grant only a host can do: bring a user to the
/// authorization URL and hand back where they were redirected. Brain never opens a
/// browser; a test suite's handler may follow the URL itself.
#[async_trait]
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// The full redirect URL (with `code` and `state`) after the user approved, or why
    /// there is none (declined, timed out).
    async fn authorize(&self, prompt: &AuthorizationPrompt) -> Result<String, Declined>;
}

/// Why a user's approval did not come (declined, timed out, the page unreachable): the
/// handler's words, which the call's failure quotes (so never a secret). Made from any
/// text (`"the user declined".into()`), so `?` takes a `String` or `&str` error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declined(String);

impl Declined {
    /// The approval did not come, for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
}

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Declined {}

impl From<String> for Declined {
    fn from(reason: String) -> Self {
        Self(reason)
    }
}

impl From<&str> for Declined {
    fn from(reason: &str) -> Self {
        Self(reason.to_owned())
    }
}

/// The authorization code grant's settings.
#[derive(Clone)]
pub(crate) struct Delegated {
    pub(crate) handler: Arc<dyn AuthorizationHandler>,
    pub(crate) redirect_uri: String,
    /// A Client ID Metadata Document URL, used as `client_id` where the server takes one.
    pub(crate) metadata_document: Option<String>,
    pub(crate) client_name: String,
}

impl std::fmt::Debug for Delegated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegated")
            .field("redirect_uri", &self.redirect_uri)
            .field("metadata_document", &self.metadata_document)
            .finish_non_exhaustive()
    }
}

/// An OAuth client: machine credentials (the client credentials grant), or a user's
/// delegation (the authorization code grant with PKCE, through an
/// [`AuthorizationHandler`]).
#[derive(Clone, Debug)]
pub struct OAuthClient {
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) proof: Option<ClientProof>,
    pub(crate) scopes: Vec<String>,
    pub(crate) principal: Option<String>,
    pub(crate) delegated: Option<Delegated>,
    /// A secret may go to whichever authorization server the server names (test suites).
    pub(crate) trust_server_metadata: bool,
    /// Where tokens are kept between runs, if the host keeps them.
    pub(crate) store: Option<Store>,
    /// Whether tokens are asked for DPoP-bound (RFC 9449) from the start; without it,
    /// only once a server challenges with `DPoP` alone.
    pub(crate) dpop: bool,
    /// An enterprise user's identity to exchange for an ID-JAG, in place of the client
    /// credentials grant.
    pub(crate) enterprise: Option<Arc<IdentityAssertion>>,
}

/// A host's token store, shared by clones.
#[derive(Clone)]
pub(crate) struct Store(pub(crate) Arc<dyn TokenStore>);

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl OAuthClient {
    /// Machine credentials that go to `issuer` only: a server whose metadata names
    /// another authorization server is refused before anything is sent.
    pub fn pinned(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        proof: ClientProof,
    ) -> Self {
        Self {
            issuer: Some(issuer.into()),
            ..Self::unpinned(client_id, proof)
        }
    }

    /// Whether a secret or key of these credentials may go to `issuer`: the pinned one,
    /// any for a test suite's client, and any for a client with nothing secret.
    pub(crate) fn may_send_to(&self, issuer: &str) -> bool {
        match &self.issuer {
            Some(pinned) => same_issuer(pinned, issuer),
            // An identity assertion (its ID-JAG) is the user's: only to a pinned issuer.
            None => {
                self.trust_server_metadata || (self.proof.is_none() && self.enterprise.is_none())
            }
        }
    }

    /// Machine credentials whose authorization server is not known yet: a call finds it
    /// and fails naming it, without sending anything secret, so a person can review it
    /// and pin it (what `mcp-tools` does without `-oauth-issuer`).
    pub fn unpinned(client_id: impl Into<String>, proof: ClientProof) -> Self {
        Self {
            issuer: None,
            client_id: Some(client_id.into()),
            proof: Some(proof),
            scopes: Vec::new(),
            principal: None,
            delegated: None,
            trust_server_metadata: false,
            store: None,
            dpop: false,
            enterprise: None,
        }
    }

    /// Machine credentials that go to whichever authorization server the server's
    /// metadata names. For test suites only: a hostile server would name its own and
    /// collect the secret.
    pub fn trusting_server_metadata(client_id: impl Into<String>, proof: ClientProof) -> Self {
        Self::unpinned(client_id, proof).trusting_any_issuer()
    }

    /// These credentials, sent to whichever authorization server the server names. For
    /// test suites only: a hostile server would name its own and collect the secret.
    #[must_use]
    pub fn trusting_any_issuer(mut self) -> Self {
        self.trust_server_metadata = true;
        self
    }

    /// A user's delegation: `handler` brings the user to the authorization server, which
    /// sends them back to `redirect_uri`. The client registers itself (a Client ID
    /// Metadata Document, else dynamic registration) unless [`Self::with_client`] names it.
    pub fn delegated(
        handler: Arc<dyn AuthorizationHandler>,
        redirect_uri: impl Into<String>,
    ) -> Self {
        Self {
            issuer: None,
            client_id: None,
            proof: None,
            scopes: Vec::new(),
            principal: None,
            trust_server_metadata: false,
            store: None,
            dpop: false,
            enterprise: None,
            delegated: Some(Delegated {
                handler,
                redirect_uri: redirect_uri.into(),
                metadata_document: None,
                client_name: "Brain".to_owned(),
            }),
        }
    }

    /// A pre-registered client id, and its secret or key if it has one (with a secret or
    /// key, pin the issuer with [`Self::pinned_to`]: it is sent nowhere else).
    #[must_use]
    pub fn with_client(mut self, client_id: impl Into<String>, proof: Option<ClientProof>) -> Self {
        self.client_id = Some(client_id.into());
        self.proof = proof;
        self
    }

    /// Credentials that go to `issuer` only.
    #[must_use]
    pub fn pinned_to(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The URL of this client's Client ID Metadata Document, used as its `client_id`
    /// where the authorization server accepts one.
    #[must_use]
    pub fn with_metadata_document(mut self, url: impl Into<String>) -> Self {
        if let Some(d) = self.delegated.as_mut() {
            d.metadata_document = Some(url.into());
        }
        self
    }

    /// Tokens asked for DPoP-bound (RFC 9449) from the first token request: each one
    /// proves possession of a key made in memory for this client, and every request that
    /// carries it a proof of its own. Without it, DPoP is used once a server challenges
    /// with `DPoP` alone.
    #[must_use]
    pub fn with_dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// Tokens for the enterprise user `identity` asserts (SEP-990): got by exchanging
    /// it for an ID-JAG at the identity provider, then redeeming that at the server's
    /// authorization server (which these credentials authenticate to, pinned as
    /// always). Give each user's assertion with [`Self::for_principal`]; a new
    /// assertion (the old one expired) gets new tokens.
    #[must_use]
    pub fn with_identity_assertion(mut self, identity: IdentityAssertion) -> Self {
        self.enterprise = Some(Arc::new(identity));
        self
    }

    /// Tokens kept in `store` between runs (loaded when first needed, saved as got).
    #[must_use]
    pub fn with_token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(Store(store));
        self
    }

    /// Whose tokens these are (a tenant, a user): tokens are kept apart per principal.
    #[must_use]
    pub fn for_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// These credentials asking for `scopes` (none: the server's challenge or metadata
    /// decides).
    #[must_use]
    pub fn with_scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = scopes;
        self
    }

    /// The credentials of a binding's `oauth` block.
    pub fn from_config(config: &OAuthConfig) -> Self {
        let client = Self::pinned(
            config.issuer(),
            config.client_id(),
            ClientProof::Env(config.secret().clone()),
        )
        .with_scopes(config.scopes().to_vec());
        if config.dpop() {
            client.with_dpop()
        } else {
            client
        }
    }

    /// The client's proof, given in code or read from the environment now, with every
    /// form a peer could echo known to the redaction step (see [`learn_proof`]) before
    /// any request with these credentials is made; returned to remove from everything
    /// shown. A variable that cannot be read yet adds nothing (the token request will
    /// say why).
    pub(crate) fn secrets(&self) -> Secrets {
        let proof = self.proof_secrets();
        let Some(idp) = &self.enterprise else {
            return proof;
        };
        // The enterprise user's assertion and the client's secret at the identity
        // provider: host-given secrets, known before anything is sent.
        brain_mcp_proto::text::learn(idp.assertion.expose());
        brain_mcp_proto::text::learn_jwt(idp.assertion.expose());
        let mut values = vec![idp.assertion.expose()];
        if let Some(secret) = &idp.client_secret {
            learn_proof(idp.client_id.as_deref(), secret.expose(), false);
            values.push(secret.expose());
        }
        proof.with(values)
    }

    fn proof_secrets(&self) -> Secrets {
        let value = match &self.proof {
            Some(ClientProof::Secret(s)) => Some((s.expose().to_owned(), false)),
            Some(ClientProof::PrivateKeyPem(s)) => Some((s.expose().to_owned(), true)),
            Some(ClientProof::Env(SecretVar::Secret(var))) => {
                std::env::var(var).ok().map(|v| (v, false))
            }
            Some(ClientProof::Env(SecretVar::Key(var))) => {
                std::env::var(var).ok().map(|v| (v, true))
            }
            Some(ClientProof::WorkloadJwt(jwt)) => {
                brain_mcp_proto::text::learn_jwt(jwt.expose());
                return Secrets::new([jwt.expose()]);
            }
            Some(ClientProof::Env(SecretVar::WorkloadEnv(var))) => {
                let Ok(jwt) = std::env::var(var) else {
                    return Secrets::none();
                };
                let jwt = brain_mcp_proto::text::Secret::new(jwt.trim());
                brain_mcp_proto::text::learn_jwt(jwt.expose());
                return Secrets::new([jwt.expose()]);
            }
            // A workload file is read, and known, at each token request.
            Some(ClientProof::Env(_)) | None => None,
        };
        let Some((value, is_key)) = value.filter(|(v, _)| !v.is_empty()) else {
            return Secrets::none();
        };
        let value = brain_mcp_proto::text::Secret::new(value);
        learn_proof(self.client_id.as_deref(), value.expose(), is_key);
        Secrets::new([value.expose()])
    }

    /// The `oauth` block of a binding with these credentials, when they can be written
    /// as one: pinned to an issuer, the secret or key in an environment variable.
    pub(crate) fn config_form(&self) -> Option<serde_json::Value> {
        let issuer = EndpointUrl::parse(self.issuer.as_deref()?).ok()?;
        let Some(ClientProof::Env(secret)) = &self.proof else {
            return None;
        };
        let config = OAuthConfig::new(
            issuer,
            self.client_id.clone()?,
            secret.clone(),
            self.scopes.clone(),
        )
        .with_dpop(self.dpop);
        Some(config.to_value())
    }

    /// The pinned issuer, if any.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client's identifier, when it has one before registering.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }
}

/// What a call to a server authenticates with.
#[derive(Clone, Debug)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // one per call, moved once: a box would only add an allocation
pub enum Credential {
    /// The binding's own (`token_env`, `oauth`, or nothing).
    FromBinding,
    /// This bearer token.
    Bearer(Secret),
    /// Tokens got with this OAuth client.
    OAuth(OAuthClient),
    /// The tenant may not use the server: the call fails before anything is sent.
    NotAuthorized,
}

/// Where an embedder's credentials come from: asked before each call with the tenant
/// and the server's URL. Rotation takes effect at the next call; tokens got with the
/// same credentials are shared and renewed by the client. Implement it with
/// `#[brain_mcp_bind::async_trait]` on the `impl` (re-exported: no dependency needed).
#[async_trait]
pub trait CredentialSource: Send + Sync + 'static {
    /// The credential for `tenant`'s call to the server at `server_url` (the server's
    /// URL as the binding or the managed server gives it, path and query included).
    async fn credential(&self, tenant: &str, server_url: &str) -> Credential;
}
