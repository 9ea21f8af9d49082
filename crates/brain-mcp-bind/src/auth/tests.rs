//! The authorizer against hostile peers: the destination rule through the whole
//! authorization path (a server that names its host's loopback in its challenge gets
//! nothing fetched there unless it is on loopback itself), a registration's client secret
//! that cannot blank other servers' output, and a refused token handed back. The test
//! servers all listen on 127.0.0.1, so a server off loopback is simulated with
//! [`McpClient::take_servers_as`].

use std::sync::atomic::Ordering;
use std::time::Duration;

use brain_mcp_proto::auth::AddrClass;
use brain_tests::counting::counting_listener;
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use brain_tools_core::Secret;

use crate::discover::{self, DiscoverErrorKind};
use crate::{ClientProof, McpClient, OAuthClient};

/// An MCP server that answers every request with a challenge naming `metadata`.
fn naming(metadata: String) -> TestServer {
    let challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    TestServer::start(
        ServerConfig::new(Era::Stateless)
            .hook(move |_| Some(RawReply::json(401, "{}").header("www-authenticate", &challenge))),
    )
}

/// Credentials pinned to an issuer that never resolves: the search reads the server's
/// documents, then fails at the issuer, naming what the rule refused on the way.
fn oauth() -> OAuthClient {
    OAuthClient::pinned(
        "https://auth.invalid",
        "brain-host",
        ClientProof::Secret(Secret::new("s3cret")),
    )
}

#[tokio::test]
async fn a_server_off_loopback_cannot_send_the_host_to_its_loopback() {
    let (port, accepted) = counting_listener().await;
    let server = naming(format!("http://evil.localhost:{port}/admin/reset?all=1"));
    let client = McpClient::new().unwrap();
    client.take_servers_as(AddrClass::Public);
    let deadline = Duration::from_secs(10);
    let err = discover::list_oauth(&client, &server.url(), &oauth(), deadline)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), DiscoverErrorKind::Refused, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("a loopback address is reached only for a server on loopback"),
        "{message}"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "nothing reached loopback"
    );
}

#[tokio::test]
async fn a_public_server_cannot_send_the_host_to_a_private_address_literal() {
    let server = naming("https://10.0.0.7/.well-known/oauth-protected-resource".into());
    let client = McpClient::new().unwrap();
    client.take_servers_as(AddrClass::Public);
    let err = discover::list_oauth(&client, &server.url(), &oauth(), Duration::from_secs(10))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("a private address"), "{message}");
    assert!(
        message.contains("allow_private_auth_destinations"),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_on_loopback_still_reaches_loopback() {
    let (port, accepted) = counting_listener().await;
    let server = naming(format!("http://localhost:{port}/metadata"));
    let client = McpClient::new().unwrap();
    // The metadata served is no use, so the search fails; but it was fetched.
    let _ = discover::list_oauth(&client, &server.url(), &oauth(), Duration::from_secs(10)).await;
    assert!(accepted.load(Ordering::SeqCst) >= 1);
}

/// A host with one `echo` binding to `url`, credentials pinned to an issuer that never
/// resolves, and the given `allow_private_auth_destinations`.
fn host(url: &str, allow_private: bool) -> crate::ToolHost {
    let config = brain_tools_core::HostConfig::from_value(&serde_json::json!({
        "allow_private_auth_destinations": allow_private,
        "tools": [{
            "name": "echo",
            "description": "echo",
            "input_schema": {"type": "object"},
            "url": url,
            "mcp_tool": "echo",
            "tenants": ["local"],
            "timeout_seconds": 10,
            "oauth": {
                "issuer": "https://auth.invalid",
                "client_id": "brain-host",
                "client_secret_env": "CARGO_PKG_NAME",
            },
        }],
    }))
    .unwrap();
    crate::ToolHost::new(config, brain_mcp_transport::ClientConfig::default()).unwrap()
}

#[test]
fn the_host_config_setting_reaches_the_client_and_follows_reloads() {
    assert!(
        !host("http://127.0.0.1:9/mcp", false)
            .client()
            .allows_private_auth_destinations()
    );
    let allowed = host("http://127.0.0.1:9/mcp", true);
    assert!(allowed.client().allows_private_auth_destinations());
    let plain = brain_tools_core::HostConfig::from_value(&serde_json::json!({"tools": []}));
    allowed.reload(&plain.unwrap()).unwrap();
    assert!(!allowed.client().allows_private_auth_destinations());
}

#[tokio::test]
async fn a_call_whose_server_names_loopback_fails_as_authorization_failed() {
    let (port, accepted) = counting_listener().await;
    let server = naming(format!("http://127.0.0.1:{port}/admin?x=1"));
    // The setting never opens loopback.
    let host = host(&server.url(), true);
    host.client().take_servers_as(AddrClass::Public);
    let call = brain_tools_core::ToolCall::new("local", "s", "c1", serde_json::json!({}));
    let result = host.call("echo", call).result().await;
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.unknown_outcome, Some(false), "{result:?}");
    let error = result.error.unwrap();
    assert_eq!(error.kind, brain_tools_core::ErrorKind::AuthorizationFailed);
    assert!(
        error
            .message
            .contains("a loopback address is reached only for a server on loopback"),
        "{}",
        error.message
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "nothing reached loopback"
    );
}

/// A token response as an authorization server would send it.
fn token(body: &str) -> brain_mcp_proto::auth::Token {
    brain_mcp_proto::auth::token::read_token(200, body.as_bytes()).unwrap()
}

#[test]
fn a_client_secret_a_registration_chose_cannot_blank_everyone_s_output() {
    let authorizer = super::Authorizer::new(&oauth(), super::footprint::Footprint::default());
    let registered = super::Credentials {
        client_id: "registered-1".into(),
        proof: Some(ClientProof::Secret(Secret::new("content"))),
        method: None,
        issued: true,
        enterprise: None,
    };
    authorizer
        .keep(
            token(r#"{"access_token":"at-REG-0123456789abc","token_type":"Bearer"}"#),
            None,
            "https://as.example",
            &registered,
        )
        .unwrap();
    let shown = brain_mcp_proto::text::Secrets::none().redact(r#"{"content":[1]}"#);
    assert_eq!(shown, r#"{"content":[1]}"#);
    // The authorizer's own set still removes it from its calls' text.
    assert_eq!(authorizer.secrets().redact("x content y"), "x [redacted] y");
}

#[test]
fn a_refused_token_handed_back_is_not_kept() {
    let authorizer = super::Authorizer::new(&oauth(), super::footprint::Footprint::default());
    let who = super::Credentials::of(&oauth()).unwrap();
    let body = r#"{"access_token":"at-SAME-0123456789abc","token_type":"Bearer"}"#;
    authorizer
        .keep(token(body), None, "https://as.example", &who)
        .unwrap();
    if let Some(held) = super::lock(&authorizer.held).as_mut() {
        held.refuse();
    }
    let again = authorizer.keep(token(body), None, "https://as.example", &who);
    assert!(
        again
            .unwrap_err()
            .to_string()
            .contains("gave back the refused token")
    );
    assert!(authorizer.bearer().is_none(), "nothing usable is held");
}

#[test]
fn an_identity_assertion_goes_only_to_a_pinned_issuer() {
    let assertion =
        || super::IdentityAssertion::id_token("https://idp.example/token", Secret::new("id-tok-9"));
    let unpinned = OAuthClient::unpinned("app", ClientProof::Secret(Secret::new("s-1")))
        .with_client("app", None)
        .with_identity_assertion(assertion());
    assert!(!unpinned.may_send_to("https://as.attacker.example"));
    let pinned = OAuthClient::pinned(
        "https://as.example",
        "app",
        ClientProof::Secret(Secret::new("s-1")),
    )
    .with_client("app", None)
    .with_identity_assertion(assertion());
    assert!(pinned.may_send_to("https://as.example"));
    assert!(!pinned.may_send_to("https://as.attacker.example"));
}

#[test]
fn a_client_that_registers_itself_keeps_its_tokens_per_process() {
    use std::sync::Arc;
    struct Prompt;
    #[async_trait::async_trait]
    impl super::AuthorizationHandler for Prompt {
        async fn authorize(
            &self,
            _prompt: &super::AuthorizationPrompt,
        ) -> Result<String, super::Declined> {
            Err("no user here".into())
        }
    }
    let store: Arc<dyn super::TokenStore> = Arc::new(super::MemoryTokenStore::new());
    let registers = OAuthClient::delegated(Arc::new(Prompt), "http://127.0.0.1/cb")
        .with_token_store(store.clone());
    let footprint = super::footprint::Footprint::default;
    let authorizer = super::Authorizer::new(&registers, footprint());
    assert!(
        authorizer.store().is_none(),
        "each process registers a client of its own: no row to share"
    );
    let named = registers.with_client("brain-host", None);
    let authorizer = super::Authorizer::new(&named, footprint());
    assert!(
        authorizer.store().is_some(),
        "a named client shares its row"
    );
}
