//! The credentials an authorization scenario hands the client in its context, as a
//! Brain embedder would hand them to the host.

use std::sync::Arc;

use async_trait::async_trait;
use brain_mcp_bind::{ClientProof, Credential, CredentialSource, OAuthClient, Secret};
use serde_json::Value;

use crate::scenarios::Run;

/// The OAuth client of an `auth/*` scenario, from its context: client credentials
/// (`client_secret`, or `private_key_pem`) under `client_id`. The suite's authorization
/// server is not known in advance, so the client trusts the one the server names, as
/// only a test may.
pub(crate) fn client(run: &Run) -> Result<Option<OAuthClient>, String> {
    if !run.scenario.starts_with("auth/") {
        return Ok(None);
    }
    let text = |key: &str| run.context.get(key).and_then(Value::as_str);
    let Some(client_id) = text("client_id") else {
        return Err(format!("{}: the context names no client_id", run.scenario));
    };
    let proof = match (text("client_secret"), text("private_key_pem")) {
        (Some(secret), _) => ClientProof::Secret(Secret::new(secret)),
        (None, Some(pem)) => ClientProof::PrivateKeyPem(Secret::new(pem)),
        (None, None) => {
            return Err(format!(
                "{}: the context has no secret or key",
                run.scenario
            ));
        }
    };
    let client = match text("issuer") {
        Some(issuer) => OAuthClient::pinned(issuer, client_id, proof),
        None => OAuthClient::trusting_server_metadata(client_id, proof),
    };
    Ok(Some(client))
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
