//! The credentials an authorization scenario hands the client in its context, as a
//! Brain embedder would hand them to the host.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use brain_mcp_bind::{
    AuthorizationHandler, AuthorizationPrompt, ClientConfig, ClientProof, Credential,
    CredentialSource, IdentityAssertion, OAuthClient, Secret,
};
use brain_mcp_transport::{FetchRequest, HttpClient};
use serde_json::Value;

use crate::scenarios::Run;

/// Where the suite's authorization server sends the user back; nothing listens there:
/// the headless handler reads the redirect itself.
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The Client ID Metadata Document URL the suite expects (`auth/basic-cimd`).
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client of an `auth/*` scenario, from its context. The client credentials
/// scenarios give `client_id` with `client_secret` or `private_key_pem`; the workload
/// identity one `client_id` and the workload's JWT (`valid_jwt`); the enterprise one
/// the client's credentials, the user's ID token and the identity provider's token
/// endpoint and client id; every other one
/// is the authorization code grant, with a pre-registered client when the context names
/// one, approved by a headless handler. The suite's authorization server is not known in
/// advance, so the client trusts the one the server names (unless the context gives the
/// issuer), as only a test may.
pub(crate) fn client(run: &Run) -> Result<Option<OAuthClient>, String> {
    if !run.scenario.starts_with("auth/") {
        return Ok(None);
    }
    let text = |key: &str| run.context.get(key).and_then(Value::as_str);
    let proof = match (text("client_secret"), text("private_key_pem")) {
        (Some(secret), _) => Some(ClientProof::Secret(Secret::new(secret))),
        (None, Some(pem)) => Some(ClientProof::PrivateKeyPem(Secret::new(pem))),
        (None, None) => None,
    };
    let mut client = if let Some(jwt) = text("valid_jwt") {
        // Workload identity federation: the platform's JWT is the grant.
        let Some(client_id) = text("client_id") else {
            return Err(format!("{}: the context has no client_id", run.scenario));
        };
        OAuthClient::trusting_server_metadata(client_id, ClientProof::WorkloadJwt(Secret::new(jwt)))
    } else if let (Some(id_token), Some(endpoint)) =
        (text("idp_id_token"), text("idp_token_endpoint"))
    {
        // Enterprise-managed authorization: the user's identity as the enterprise's
        // identity provider asserted it, and the client's own credentials at the
        // MCP server's authorization server.
        let (Some(client_id), Some(proof)) = (text("client_id"), proof) else {
            return Err(format!(
                "{}: the context has no client credentials",
                run.scenario
            ));
        };
        let mut identity = IdentityAssertion::id_token(endpoint, Secret::new(id_token));
        if let Some(idp_client) = text("idp_client_id") {
            identity = identity.with_idp_client(idp_client, None);
        }
        OAuthClient::trusting_server_metadata(client_id, proof)
            .with_identity_assertion(identity)
            .for_principal("conformance")
    } else if run.scenario.starts_with("auth/client-credentials") {
        let (Some(client_id), Some(proof)) = (text("client_id"), proof) else {
            return Err(format!(
                "{}: the context has no client credentials",
                run.scenario
            ));
        };
        OAuthClient::trusting_server_metadata(client_id, proof)
    } else {
        let handler = Arc::new(Headless::new()?);
        let client = OAuthClient::delegated(handler, REDIRECT_URI)
            .with_metadata_document(METADATA_DOCUMENT)
            .for_principal("conformance");
        match text("client_id") {
            // A pre-registered client's secret, for whichever issuer the suite runs.
            Some(id) => client.with_client(id, proof).trusting_any_issuer(),
            None => client,
        }
    };
    if let Some(issuer) = text("issuer") {
        client = client.pinned_to(issuer);
    }
    Ok(Some(client))
}

/// A user who approves at once: fetches the authorization URL without following the
/// redirect and hands back its `Location`.
struct Headless(HttpClient);

impl Headless {
    fn new() -> Result<Self, String> {
        HttpClient::new(ClientConfig::default())
            .map(Self)
            .map_err(|e| format!("cannot set up HTTP: {e}"))
    }
}

#[async_trait]
impl AuthorizationHandler for Headless {
    async fn authorize(
        &self,
        prompt: &AuthorizationPrompt,
    ) -> Result<String, brain_mcp_bind::Declined> {
        let url = prompt
            .url
            .parse()
            .map_err(|_| "the authorization URL is not a URL")?;
        let answer = self
            .0
            .fetch(FetchRequest::get(url, Duration::from_secs(10)))
            .await
            .map_err(|e| e.to_string())?;
        answer.location.ok_or_else(|| {
            format!(
                "the authorization endpoint answered {} without a redirect",
                answer.status
            )
            .into()
        })
    }
}

/// Hands every call the scenario's OAuth client.
pub(crate) struct Fixed(pub(crate) OAuthClient);

#[async_trait]
impl CredentialSource for Fixed {
    async fn credential(&self, _tenant: &str, _server_url: &str) -> Credential {
        Credential::OAuth(self.0.clone())
    }
}

/// The source for `client`.
pub(crate) fn source(client: OAuthClient) -> Arc<dyn CredentialSource> {
    Arc::new(Fixed(client))
}
