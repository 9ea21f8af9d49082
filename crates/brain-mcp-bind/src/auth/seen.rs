//! What authorization tells the operator (docs/observability.md; the target and the
//! counter's name are re-exported from `observe`): a span around each
//! metadata fetch and each token request, an event when each ends (which server, which
//! issuer, which grant, the outcome, the status, how long), and a counter of token
//! requests by grant and outcome. Never a secret: URLs are shown by origin, through the
//! one redaction step.

use std::time::Instant;

use brain_mcp_proto::auth::HttpUrl;
use brain_mcp_proto::auth::token::Grant;
use brain_mcp_transport::Secrets;
use tracing::Span;

/// The `tracing` target of authorization spans and events.
pub const AUTH_TARGET: &str = "brain::auth";
/// Metric: token requests, labelled `grant` (`client_credentials`, `refresh_token`,
/// `authorization_code`) and `outcome` (`ok`, `refused`, `invalid_answer`, or the
/// transport's error kind).
pub const TOKEN_REQUESTS: &str = "brain_mcp_token_requests_total";

/// A URL as authorization events show it: its origin, redacted and terminal-safe.
fn origin(url: &str) -> String {
    let origin = HttpUrl::parse(url).map_or_else(|_| "(not a URL)".to_owned(), |u| u.origin());
    Secrets::none().shown(&origin, 256).into_owned()
}

/// The name of a grant, as events and the metric label it.
pub(crate) fn grant_name(grant: &Grant<'_>) -> &'static str {
    match grant {
        Grant::ClientCredentials => "client_credentials",
        Grant::Code { .. } => "authorization_code",
        Grant::Refresh(_) => "refresh_token",
        Grant::JwtBearer(_) => "jwt_bearer",
        _ => "other",
    }
}

/// The span of one metadata fetch from `url`.
pub(crate) fn metadata_span(url: &str) -> Span {
    tracing::debug_span!(target: AUTH_TARGET, "auth_metadata", url.origin = %origin(url))
}

/// Notes how a metadata fetch ended: `status` when the server answered.
pub(crate) fn metadata_done(span: &Span, status: Option<u16>, outcome: &str, started: Instant) {
    tracing::debug!(
        target: AUTH_TARGET,
        parent: span,
        status,
        outcome,
        duration_ms = elapsed_ms(started),
        "metadata"
    );
}

/// The span of one token request for the MCP server at `resource`, to `issuer`.
pub(crate) fn token_span(resource: &str, issuer: &str, grant: &'static str) -> Span {
    tracing::debug_span!(
        target: AUTH_TARGET,
        "auth_token",
        server = %origin(resource),
        issuer = %origin(issuer),
        grant,
    )
}

/// Notes how a token request ended, and counts it.
pub(crate) fn token_done(
    span: &Span,
    grant: &'static str,
    status: Option<u16>,
    outcome: &'static str,
    started: Instant,
) {
    metrics::counter!(TOKEN_REQUESTS, "grant" => grant, "outcome" => outcome).increment(1);
    tracing::debug!(
        target: AUTH_TARGET,
        parent: span,
        status,
        outcome,
        duration_ms = elapsed_ms(started),
        "token request"
    );
}

/// No token could be had for a request to `server`: whose fault it was. The message is
/// the call's (its failure names it); the event says where to look.
pub(crate) fn no_token(server: &str, failure: &super::AuthFailure) {
    tracing::debug!(
        target: AUTH_TARGET,
        server = %origin(server),
        fault = failure.fault().as_str(),
        "no token"
    );
}

/// Milliseconds since `started`.
fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
