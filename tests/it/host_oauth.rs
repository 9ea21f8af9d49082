//! Managed HTTP servers behind OAuth: tokens got with client credentials given in code,
//! or from the host's credential source, for listing the tools and for every call.

use std::sync::Arc;

use brain_mcp_bind::{
    ClientProof, Credential, CredentialSource, ManagedServer, OAuthClient, Secret, ToolSpec,
};
use brain_tests::auth::TestAuthServer;
use brain_tests::server::{Era, TestServer};
use serde_json::json;

use crate::stdio_support::{TENANT, call, host};

const CLIENT: &str = "brain-managed";
const SECRET: &str = "managed-SECRET-4c1e9b";

/// An authorization server and an MCP server of `era` it guards.
fn guarded(era: Era) -> (TestAuthServer, TestServer) {
    TestAuthServer::guarding(era, CLIENT, SECRET)
}

fn client(issuer: &str) -> OAuthClient {
    OAuthClient::pinned(issuer, CLIENT, ClientProof::Secret(Secret::new(SECRET)))
}

#[tokio::test]
async fn a_managed_server_lists_and_calls_with_oauth_given_in_code() {
    for era in [Era::Handshake, Era::Stateless] {
        let (auth, server) = guarded(era);
        let host = host();
        let managed = ManagedServer::http("guarded", server.url())
            .oauth(client(&auth.url()))
            .tool(ToolSpec::new("echo", [TENANT]));
        let names = host.add_server(managed).await.expect("listed with a token");
        assert_eq!(names, ["echo"]);
        let out = call(&host, "echo", "c1", json!({"text": "hi"})).await;
        assert_eq!(out.result["is_error"], false, "{era:?}: {}", out.result);
        assert_eq!(
            auth.token_requests().len(),
            1,
            "{era:?}: one token for the listing and the call"
        );
        let shown = format!(
            "{:?}",
            ManagedServer::http("x", server.url()).oauth(client(&auth.url()))
        );
        assert!(!shown.contains(SECRET), "{shown}");
        host.shutdown(std::time::Duration::from_secs(5)).await;
    }
}

/// A credential source that gives every tenant the same OAuth client, and says which
/// tenants it was asked for.
struct Source {
    client: OAuthClient,
    asked: std::sync::Mutex<Vec<String>>,
}

#[brain_mcp_bind::async_trait]
impl CredentialSource for Source {
    async fn credential(&self, tenant: &str, _server_url: &str) -> Credential {
        self.asked.lock().expect("asked").push(tenant.to_owned());
        if tenant == "refused" {
            return Credential::NotAuthorized;
        }
        Credential::OAuth(self.client.clone())
    }
}

#[tokio::test]
async fn without_its_own_credential_the_host_s_source_lists_its_tools() {
    let (auth, server) = guarded(Era::Stateless);
    let host = host();
    let source = Arc::new(Source {
        client: client(&auth.url()),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    host.set_credentials(Some(source.clone()));
    let managed =
        ManagedServer::http("guarded", server.url()).tool(ToolSpec::new("echo", [TENANT]));
    assert_eq!(host.add_server(managed).await.expect("listed"), ["echo"]);
    let out = call(&host, "echo", "c1", json!({"text": "hi"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    assert_eq!(auth.token_requests().len(), 1);
    assert_eq!(*source.asked.lock().expect("asked"), [TENANT, TENANT]);

    // A source that refuses the tenant: nothing is listed, nothing sent.
    let before = server.stats().received.len();
    let refused =
        ManagedServer::http("refused", server.url()).tool(ToolSpec::new("echo", ["refused"]));
    let error = host.add_server(refused).await.expect_err("refused");
    assert!(error.to_string().contains("no credentials"), "{error}");
    assert_eq!(server.stats().received.len(), before);
    host.shutdown(std::time::Duration::from_secs(5)).await;
}
