//! The authorization exchanges themselves: the metadata search the core orders, and
//! one token request. Every fetch has a byte bound and a deadline; nothing is retried
//! beyond what the core's search and rounds allow.

use std::time::{Duration, Instant};

use brain_mcp_proto::auth::ClientAuth;
use brain_mcp_proto::auth::dpop;
use brain_mcp_proto::auth::token::{self, Grant, Token};
use brain_mcp_proto::auth::{AuthError, Authority, BearerChallenge, HttpUrl, Search, Step};
use brain_mcp_proto::client::Header;
use brain_mcp_proto::text::Secret;
use brain_mcp_transport::{FetchRequest, Fetched, Secrets, TransportError};
use bytes::Bytes;
use http::Uri;
use tracing::Instrument;

use super::credentials::Credentials;
use super::dpop::DpopKey;
use super::failure::AuthFailure;
use super::given::IdentityAssertion;
use super::net::Net;
use super::seen as observe;

/// How long one authorization request may take (each counts inside the call's deadline).
pub(crate) const STEP_DEADLINE: Duration = Duration::from_secs(10);
/// The most bytes of a metadata document or token answer read.
const DOCUMENT_LIMIT: usize = 64 * 1024;

/// Finds the authority for `server`, pinned to `issuer` when the client holds a secret.
pub(crate) async fn find(
    net: &Net<'_>,
    server: &HttpUrl,
    challenge: Option<&BearerChallenge>,
    issuer: Option<&str>,
) -> Result<Authority, AuthFailure> {
    let mut search = Search::new(server, challenge, issuer);
    // A document the destination rule kept from being fetched: the search goes on (the
    // next place may serve it), and names the rule if it fails.
    let mut refused: Option<String> = None;
    loop {
        match search.step() {
            Step::Fetch(url) => {
                let answer = match get(net, &url).await {
                    Ok(answer) => Some(answer),
                    Err(Unfetched::Failed(e)) if e.is_destination() => {
                        refused.get_or_insert_with(|| e.to_string());
                        None
                    }
                    Err(_) => None,
                };
                search.handle(answer.as_ref().map(|f| (f.status, f.body.as_ref())));
            }
            Step::Found(authority) => return Ok(*authority),
            Step::Failed(e) => {
                // A search the host's own destination rule stopped is the configuration's
                // to change (`allow_private_auth_destinations`), not the server's.
                return Err(match refused {
                    Some(why) => {
                        AuthFailure::config(format!("authorization metadata: {e} ({why})"))
                    }
                    None => AuthFailure::server(format!("authorization metadata: {e}")),
                });
            }
            _ => {
                return Err(AuthFailure::server(
                    "authorization metadata: the search cannot go on",
                ));
            }
        }
    }
}

/// Why a metadata document was not had.
enum Unfetched {
    /// The search named a URL that is not one: nothing was sent.
    NotAUrl,
    /// The fetch failed.
    Failed(TransportError),
}

impl Unfetched {
    /// The outcome its log line gives (a URL that is none was always `authorization`).
    fn outcome(&self) -> &'static str {
        match self {
            Self::NotAUrl => "authorization",
            Self::Failed(e) => e.kind_name(),
        }
    }
}

/// A GET of a metadata document, within the server's destination rule, in its span.
async fn get(net: &Net<'_>, url: &str) -> Result<Fetched, Unfetched> {
    let started = Instant::now();
    let span = observe::metadata_span(url);
    let result = fetch_document(net, url).instrument(span.clone()).await;
    let (status, outcome) = match &result {
        Ok(answer) if answer.status == 200 => (Some(answer.status), "ok"),
        Ok(answer) => (Some(answer.status), "status"),
        Err(e) => (None, e.outcome()),
    };
    observe::metadata_done(&span, status, outcome, started);
    result
}

async fn fetch_document(net: &Net<'_>, url: &str) -> Result<Fetched, Unfetched> {
    let uri: Uri = url.parse().map_err(|_| Unfetched::NotAUrl)?;
    let mut req = FetchRequest::get(uri, STEP_DEADLINE);
    req.limit = DOCUMENT_LIMIT;
    req.destinations = Some(net.destinations);
    net.http.fetch(req).await.map_err(Unfetched::Failed)
}

/// Asks `authority`'s token endpoint for a token with `grant`, the client proving its
/// identity with `credentials`; the client's secrets are sent there and nowhere else.
pub(crate) async fn token(
    net: &Net<'_>,
    authority: &Authority,
    credentials: &Credentials,
    grant: Grant<'_>,
    scope: Option<&str>,
    dpop: Option<&DpopKey>,
) -> Result<Token, AuthFailure> {
    let endpoint = authority.server.token_endpoint.as_deref().ok_or_else(|| {
        AuthFailure::server(
            "authorization: the authorization server's metadata has no token_endpoint",
        )
    })?;
    let uri = HttpUrl::parse(endpoint)
        .ok()
        .and_then(|_| endpoint.parse::<Uri>().ok())
        .ok_or_else(|| {
            AuthFailure::server("authorization: the token endpoint is not an http(s) URL")
        })?;
    // A workload's client presents the platform's JWT in place of client credentials
    // (RFC 7523 §2.1), read afresh now: the platform rotates it.
    let workload = credentials
        .workload()
        .await
        .map_err(|why| why.within("authorization: "))?;
    // An enterprise user's identity: exchanged at the identity provider for an ID-JAG
    // first (SEP-990), which then stands for the grant here.
    let id_jag = match (&grant, &credentials.enterprise) {
        (Grant::ClientCredentials, Some(idp)) => Some(exchange(net, idp, authority, scope).await?),
        _ => None,
    };
    let grant = match (&grant, &workload, &id_jag) {
        (Grant::ClientCredentials, Some(jwt), _) => Grant::JwtBearer(jwt.expose()),
        (Grant::ClientCredentials, None, Some(jag)) => Grant::JwtBearer(jag.expose()),
        _ => grant,
    };
    let mut form = token::grant_form(grant, &authority.resource, scope);
    let (basic, mut secrets) = credentials
        .apply(&mut form, &authority.server, &authority.issuer)
        .map_err(|why| why.within("authorization: "))?;
    match grant {
        Grant::Refresh(refresh) => secrets = secrets.with([refresh]),
        Grant::Code { code, verifier, .. } => secrets = secrets.with([code, verifier]),
        Grant::JwtBearer(assertion) => secrets = secrets.with([assertion]),
        _ => {}
    }
    let body = Bytes::from(form.body().to_owned());
    let grant_name = observe::grant_name(&grant);
    let span = observe::token_span(&authority.resource, &authority.issuer, grant_name);
    let started = Instant::now();
    let mut nonce_rounds = 0;
    let answer = loop {
        let mut req = FetchRequest::post(
            uri.clone(),
            "application/x-www-form-urlencoded",
            body.clone(),
            STEP_DEADLINE,
        );
        req.limit = DOCUMENT_LIMIT;
        req.headers = basic
            .iter()
            .map(|value| Header::sensitive("authorization", value.clone()))
            .collect();
        if let Some(key) = dpop {
            // A fresh proof for each attempt (RFC 9449 §5), with the server's nonce.
            let proof = key
                .token_request_header(endpoint)
                .map_err(|why| why.within("authorization: "))?;
            secrets = secrets.with([proof.value.as_ref()]);
            req.headers.push(proof);
        }
        req.secrets = secrets.clone();
        req.destinations = Some(net.destinations);
        let answer = match net.http.fetch(req).instrument(span.clone()).await {
            Ok(answer) => answer,
            Err(e) => {
                observe::token_done(&span, grant_name, None, e.kind_name(), started);
                let message = format!("authorization: token request: {e}");
                return Err(if e.is_destination() {
                    AuthFailure::config(message)
                } else {
                    AuthFailure::server(message)
                });
            }
        };
        // RFC 9449 §8: the authorization server wants its nonce in the proof; nothing
        // was granted, so the request goes again, a bounded number of times.
        let nonce = answer.dpop_nonce.as_deref().and_then(dpop::nonce);
        match (dpop, nonce) {
            (Some(key), Some(nonce))
                if nonce_rounds < dpop::MAX_NONCE_ROUNDS
                    && dpop::token_endpoint_wants_nonce(answer.status, &answer.body) =>
            {
                nonce_rounds += 1;
                key.token_nonce(nonce);
            }
            _ => break answer,
        }
    };
    let read = token::read_token_with(answer.status, &answer.body, dpop.is_some());
    let outcome = match &read {
        Ok(_) => "ok",
        Err(AuthError::TokenRefused { .. }) => "refused",
        Err(_) => "invalid_answer",
    };
    observe::token_done(&span, grant_name, Some(answer.status), outcome, started);
    read.map_err(|e| {
        let message = format!("authorization: {}", redacted(&secrets, &e.to_string()));
        // The client's own identity or scope refused: the credentials are to fix.
        match &e {
            AuthError::TokenRefused {
                error: Some(code), ..
            } if matches!(
                code.as_str(),
                "invalid_client" | "unauthorized_client" | "invalid_scope"
            ) =>
            {
                AuthFailure::config(message)
            }
            _ => AuthFailure::server(message),
        }
    })
}

/// Exchanges an enterprise user's identity assertion at the identity provider's token
/// endpoint (the host's, never one a server named) for an ID-JAG meant for
/// `authority`'s issuer and resource (RFC 8693, SEP-990). The assertion goes there and
/// nowhere else; the ID-JAG is a secret from the moment it is read.
async fn exchange(
    net: &Net<'_>,
    idp: &IdentityAssertion,
    authority: &Authority,
    scope: Option<&str>,
) -> Result<Secret, AuthFailure> {
    let failed = |why: String| AuthFailure::server(format!("authorization: token exchange: {why}"));
    let uri = HttpUrl::parse(&idp.token_endpoint)
        .ok()
        .and_then(|_| idp.token_endpoint.parse::<Uri>().ok())
        .ok_or_else(|| {
            AuthFailure::config(
                "authorization: token exchange: the identity provider's token endpoint is not \
                 an http(s) URL",
            )
        })?;
    let assertion = idp.assertion.expose();
    brain_mcp_proto::text::learn(assertion);
    brain_mcp_proto::text::learn_jwt(assertion);
    let grant = Grant::IdJag {
        subject_token: assertion,
        subject_token_type: idp.kind,
        audience: &authority.issuer,
    };
    let mut form = token::grant_form(grant, &authority.resource, scope);
    let mut secrets = Secrets::new([assertion]);
    if let Some(client_id) = &idp.client_id {
        match &idp.client_secret {
            Some(secret) => {
                brain_mcp_proto::text::learn_basic(client_id, secret.expose());
                token::client_form(&mut form, ClientAuth::Post, client_id, secret.expose());
                secrets = secrets.with([secret.expose()]);
            }
            None => {
                token::client_form(&mut form, ClientAuth::None, client_id, "");
            }
        }
    }
    let mut req = FetchRequest::post(
        uri,
        "application/x-www-form-urlencoded",
        Bytes::from(form.body().to_owned()),
        STEP_DEADLINE,
    );
    req.limit = DOCUMENT_LIMIT;
    req.secrets = secrets.clone();
    // The host named this endpoint: no server chose it, so the rule for URLs a server
    // names does not apply.
    req.destinations = None;
    let span = observe::token_span(&authority.resource, &idp.token_endpoint, "token_exchange");
    let started = Instant::now();
    let answer = match net.http.fetch(req).instrument(span.clone()).await {
        Ok(answer) => answer,
        Err(e) => {
            observe::token_done(&span, "token_exchange", None, e.kind_name(), started);
            return Err(failed(format!("{e}")));
        }
    };
    let read = token::read_id_jag(answer.status, &answer.body);
    let outcome = match &read {
        Ok(_) => "ok",
        Err(AuthError::TokenRefused { .. }) => "refused",
        Err(_) => "invalid_answer",
    };
    observe::token_done(
        &span,
        "token_exchange",
        Some(answer.status),
        outcome,
        started,
    );
    let jag = read.map_err(|e| failed(redacted(&secrets, &e.to_string())))?;
    brain_mcp_proto::text::learn_jwt(jag.expose());
    Ok(jag)
}

fn redacted(secrets: &Secrets, text: &str) -> String {
    secrets.redact(text).into_owned()
}
