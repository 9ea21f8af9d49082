//! The authorization code grant with PKCE, for a client acting for a user: who the
//! client is at this authorization server (given, a metadata document, or registered),
//! the trip through the host's handler, and the checks on the way back.

use brain_mcp_proto::auth::Authority;
use brain_mcp_proto::auth::code::{self, AuthorizationRequest, Registered};
use brain_mcp_transport::FetchRequest;
use bytes::Bytes;
use http::Uri;

use super::credentials::{Credentials, pkce_challenge, random_token};
use super::failure::AuthFailure;
use super::flow::STEP_DEADLINE;
use super::given::{AuthorizationPrompt, Delegated};
use super::net::Net;

/// Who the client is at `authority`: a Client ID Metadata Document's URL where the
/// server takes one, else a dynamic registration.
pub(crate) async fn register(
    net: &Net<'_>,
    authority: &Authority,
    delegated: &Delegated,
) -> Result<Credentials, AuthFailure> {
    let server = &authority.server;
    if let Some(url) = &delegated.metadata_document
        && server.client_id_metadata_document_supported
    {
        return Ok(Credentials {
            client_id: url.clone(),
            proof: None,
            method: None,
            issued: true,
            enterprise: None,
        });
    }
    let endpoint = server.registration_endpoint.as_deref().ok_or_else(|| {
        AuthFailure::server(
            "authorization: the authorization server offers no way to register this client \
             (no registration_endpoint, no Client ID Metadata Document support) and none was configured",
        )
    })?;
    let uri: Uri = endpoint.parse().map_err(|_| {
        AuthFailure::server("authorization: the registration endpoint is not a URL")
    })?;
    let body = code::registration_body(&delegated.client_name, &delegated.redirect_uri, server);
    let mut req = FetchRequest::post(uri, "application/json", Bytes::from(body), STEP_DEADLINE);
    req.destinations = Some(net.destinations);
    let answer = net
        .http
        .fetch(req)
        .await
        .map_err(|e| AuthFailure::server(format!("authorization: registration: {e}")))?;
    let got = Registered::read(answer.status, &answer.body)
        .map_err(|e| AuthFailure::server(format!("authorization: {e}")))?;
    Ok(Credentials::registered(&got, server))
}

/// The user's approval: the authorization URL through the host's handler, and the code
/// from the redirect back, once its `state` and `iss` check out. Returns the code and
/// the PKCE verifier its token request needs.
pub(crate) async fn approve(
    authority: &Authority,
    delegated: &Delegated,
    who: &Credentials,
    scope: Option<&str>,
    server_url: &str,
    principal: Option<&str>,
) -> Result<(String, String), AuthFailure> {
    let fail =
        |e: brain_mcp_proto::auth::AuthError| AuthFailure::server(format!("authorization: {e}"));
    code::check_pkce(&authority.server, authority.defaults).map_err(fail)?;
    let endpoint = authority
        .server
        .authorization_endpoint
        .as_deref()
        .ok_or_else(|| {
            AuthFailure::server(
                "authorization: the authorization server's metadata has no authorization_endpoint",
            )
        })?;
    let verifier = random_token(32)?;
    brain_mcp_proto::text::learn_per_request(&verifier);
    let state = random_token(16)?;
    let challenge = pkce_challenge(&verifier);
    let request = AuthorizationRequest::new(
        &who.client_id,
        &delegated.redirect_uri,
        &state,
        &challenge,
        &authority.resource,
        scope,
    );
    let prompt = AuthorizationPrompt {
        url: request.url(endpoint),
        redirect_uri: delegated.redirect_uri.clone(),
        server_url: server_url.to_owned(),
        principal: principal.map(str::to_owned),
    };
    let redirect = delegated.handler.authorize(&prompt).await.map_err(|why| {
        AuthFailure::declined(format!(
            "authorization: the user's approval did not come: {why}"
        ))
    })?;
    let code = code::read_redirect(
        &redirect,
        &state,
        &authority.issuer,
        authority
            .server
            .authorization_response_iss_parameter_supported,
    )
    .map_err(|e| match e {
        brain_mcp_proto::auth::AuthError::AccessDenied => {
            AuthFailure::declined(format!("authorization: {e}"))
        }
        e => fail(e),
    })?;
    brain_mcp_proto::text::learn_issued(&code);
    Ok((code, verifier))
}
