//! Tenants past the client's bound on authorizers: the least recently used one that no
//! call holds is dropped (its next call fetches a token again), the others keep theirs.

use std::sync::Arc;

use brain_mcp_bind::{ClientProof, Credential, CredentialSource, OAuthClient, Secret};
use brain_tests::auth::TestAuthServer;
use brain_tests::server::Era;
use serde_json::json;

use crate::call_support::{Call, Harness, binding, call_with, spec};

const CLIENT: &str = "brain-host";
/// The value of `CARGO_PKG_NAME` in this test process.
const SECRET: &str = env!("CARGO_PKG_NAME");

/// Every tenant is a principal of the host's one client.
struct Principals(String);

#[async_trait::async_trait]
impl CredentialSource for Principals {
    async fn credential(&self, tenant: &str, _server_url: &str) -> Credential {
        let client = OAuthClient::pinned(
            self.0.clone(),
            CLIENT,
            ClientProof::Secret(Secret::new(SECRET)),
        );
        Credential::OAuth(client.for_principal(tenant))
    }
}

#[tokio::test]
async fn past_the_bound_the_least_recently_used_tenant_fetches_its_token_again() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let mut open = spec("echo", &server.url(), "echo");
    open["tenants"] = json!(["t1", "t2", "t3"]);
    let echo = binding(open);
    let h = Harness::new();
    h.executor
        .set_credentials(Some(Arc::new(Principals(auth.url()))));
    h.client.set_authorizer_limits(2, usize::MAX);
    let mut n = 0;
    let mut call_as = async |tenant: &str| {
        n += 1;
        let mut call = Call::new(&format!("c{n}"), json!({"text": "hi"}));
        call.tenant = tenant.into();
        let out = call_with(&h, &echo, call).await;
        assert_eq!(out.result["is_error"], false, "{tenant}: {}", out.result);
        auth.token_requests().len()
    };
    assert_eq!(call_as("t1").await, 1);
    assert_eq!(call_as("t2").await, 2);
    assert_eq!(call_as("t1").await, 2, "t1 kept its token");
    assert_eq!(
        call_as("t3").await,
        3,
        "t2, the least recently used, is dropped"
    );
    assert_eq!(call_as("t1").await, 3, "t1 still has its token");
    assert_eq!(call_as("t2").await, 4, "t2 fetches its token again");
    let stats = h.client.stats();
    assert_eq!(stats.authorizers, 2);
    assert!(stats.authorizer_bytes > 0);
    h.flush().await;
}
