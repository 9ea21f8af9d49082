//! The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636) as MCP asks for
//! it: the authorization URL, what the redirect back must hold (`state`, and `iss` per
//! RFC 9207), dynamic client registration (RFC 7591), and `offline_access`.

use serde::Deserialize;
use serde_json::json;

use super::AuthError;
use super::metadata::ServerMetadata;
use super::token::{ClientAuth, encode, error_code};

/// The scope that asks for a refresh token (OpenID Connect; MCP 2026-07-28).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// What goes into an authorization request.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AuthorizationRequest<'a> {
    /// The client's id.
    pub client_id: &'a str,
    /// Where the authorization server sends the user back.
    pub redirect_uri: &'a str,
    /// The opaque value the redirect must carry back.
    pub state: &'a str,
    /// The PKCE S256 challenge.
    pub code_challenge: &'a str,
    /// The `resource` (RFC 8707).
    pub resource: &'a str,
    /// The scope, if any.
    pub scope: Option<&'a str>,
}

impl<'a> AuthorizationRequest<'a> {
    /// A request for `client_id` returning to `redirect_uri`.
    pub fn new(
        client_id: &'a str,
        redirect_uri: &'a str,
        state: &'a str,
        code_challenge: &'a str,
        resource: &'a str,
        scope: Option<&'a str>,
    ) -> Self {
        Self {
            client_id,
            redirect_uri,
            state,
            code_challenge,
            resource,
            scope,
        }
    }

    /// The URL to send the user to: `endpoint` with the request's parameters added.
    pub fn url(&self, endpoint: &str) -> String {
        let mut url = endpoint.to_owned();
        let mut add = |name: &str, value: &str| {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(name);
            url.push('=');
            url.push_str(&encode(value));
        };
        add("response_type", "code");
        add("client_id", self.client_id);
        add("redirect_uri", self.redirect_uri);
        add("state", self.state);
        add("code_challenge", self.code_challenge);
        add("code_challenge_method", "S256");
        add("resource", self.resource);
        if let Some(scope) = self.scope.filter(|s| !s.is_empty()) {
            add("scope", scope);
        }
        url
    }
}

/// Whether the server can take a PKCE S256 request: MCP requires the metadata to list
/// `S256`; only the 2025-03-26 defaults (no document at all) are taken on trust.
pub fn check_pkce(server: &ServerMetadata, defaults: bool) -> Result<(), AuthError> {
    let listed = server
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|m| m == "S256"));
    if listed || defaults {
        Ok(())
    } else {
        Err(AuthError::Document {
            what: "authorization server metadata",
            why: "it does not list PKCE S256 in code_challenge_methods_supported",
        })
    }
}

/// Reads the redirect back from the authorization server: the code, once `state` is the
/// one sent and `iss` (RFC 9207) is exactly `issuer` when present, and present when the
/// server advertises it.
pub fn read_redirect(
    redirect: &str,
    state: &str,
    issuer: &str,
    iss_advertised: bool,
) -> Result<String, AuthError> {
    let query = redirect
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or_default())
        .unwrap_or_default();
    let mut found = Found::default();
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match name {
            "code" => &mut found.code,
            "state" => &mut found.state,
            "iss" => &mut found.iss,
            "error" => &mut found.error,
            _ => continue,
        };
        if slot.is_some() {
            // RFC 6749 §3.1: a parameter sent twice makes the response unusable.
            return Err(AuthError::Redirect {
                why: format!("it repeats {name}"),
            });
        }
        *slot = Some(decode(value));
    }
    let refused = |why: String| Err(AuthError::Redirect { why });
    // The state first, on an error answer too: a forged redirect says nothing.
    if found.state.as_deref() != Some(state) {
        return refused("its state is not the one sent".into());
    }
    if let Some(error) = found.error {
        let code = error_code(&error);
        if code == Some("access_denied") {
            return Err(AuthError::AccessDenied);
        }
        return refused(format!(
            "the authorization server answered {}",
            code.unwrap_or("an error")
        ));
    }
    match found.iss.as_deref() {
        Some(iss) if iss != issuer => {
            return refused(format!("its iss is not the issuer {issuer:?}"));
        }
        None if iss_advertised => {
            return refused("it has no iss, which the authorization server promises".into());
        }
        _ => {}
    }
    found
        .code
        .filter(|c| !c.is_empty())
        .ok_or(AuthError::Redirect {
            why: "it carries no code".into(),
        })
}

#[derive(Default)]
struct Found {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
}

/// Percent-decoding of a query or form value (`+` is a space); bytes that do not form
/// UTF-8 are replaced.
pub fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(value.get(i + 1..i + 3).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The scope of an authorization request with `offline_access` added when the server
/// lists it (a refresh token then comes with the access token); unchanged otherwise.
pub fn with_offline_access(scope: Option<String>, server: &ServerMetadata) -> Option<String> {
    let offered = server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == OFFLINE_ACCESS));
    match scope {
        Some(s) if offered && !s.split(' ').any(|s| s == OFFLINE_ACCESS) => {
            Some(format!("{s} {OFFLINE_ACCESS}"))
        }
        None if offered => Some(OFFLINE_ACCESS.to_owned()),
        other => other,
    }
}

/// The body of a dynamic registration for a client returning to `redirect_uri`, asking
/// for the first method of `preferred` the server lists.
pub fn registration_body(client_name: &str, redirect_uri: &str, server: &ServerMetadata) -> String {
    let method = [ClientAuth::None, ClientAuth::Basic, ClientAuth::Post]
        .into_iter()
        .find(|m| server.accepts_auth(m.name()))
        .unwrap_or(ClientAuth::None);
    json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method.name(),
        "application_type": "native",
    })
    .to_string()
}

/// A registered client. `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Registered {
    /// The id issued.
    pub client_id: String,
    /// The secret issued, if any.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The authentication method registered, if the server says.
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("client_id", &self.client_id)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish_non_exhaustive()
    }
}

impl Registered {
    /// Reads a registration endpoint's answer (201, or 200 from lenient servers).
    pub fn read(status: u16, body: &[u8]) -> Result<Self, AuthError> {
        if !matches!(status, 200 | 201) {
            return Err(AuthError::RegistrationRefused { status });
        }
        let got: Self = serde_json::from_slice(body).map_err(|_| AuthError::Document {
            what: "registration response",
            why: "it does not hold a client_id",
        })?;
        if got.client_id.is_empty() {
            return Err(AuthError::Document {
                what: "registration response",
                why: "its client_id is empty",
            });
        }
        Ok(got)
    }

    /// How this client authenticates at `server`'s token endpoint: the registered
    /// method, else by what it holds.
    pub fn auth(&self, server: &ServerMetadata) -> ClientAuth {
        match (
            self.token_endpoint_auth_method.as_deref(),
            &self.client_secret,
        ) {
            (Some("client_secret_post"), Some(_)) => ClientAuth::Post,
            (Some("client_secret_basic"), Some(_)) => ClientAuth::Basic,
            (Some("none"), _) | (_, None) => ClientAuth::None,
            (_, Some(_)) => ClientAuth::for_secret(server).unwrap_or(ClientAuth::Basic),
        }
    }
}

#[cfg(test)]
#[path = "code_tests.rs"]
mod tests;
