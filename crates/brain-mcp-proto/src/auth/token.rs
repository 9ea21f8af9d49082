//! Token requests and their answers (RFC 6749 §4.4, §5, §6; RFC 7523 for JWT client
//! authentication): how a client proves who it is, the form it posts, and what a token
//! endpoint's answer means. The bodies are built here; the driver only posts them.

use crate::text::Secret;
use base64::Engine as _;
use serde_json::value::RawValue;

use super::AuthError;
use super::metadata::ServerMetadata;

/// How a client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// `client_secret_basic`: the id and secret in an `Authorization: Basic` header.
    Basic,
    /// `client_secret_post`: the id and secret in the form.
    Post,
    /// `private_key_jwt` (RFC 7523 §2.2): a signed assertion in the form.
    PrivateKeyJwt,
    /// `none`: a public client, identified by its id alone (with PKCE).
    None,
}

impl ClientAuth {
    /// The method's registered name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Basic => "client_secret_basic",
            Self::Post => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
            Self::None => "none",
        }
    }

    /// The method for a client with a secret: `client_secret_basic` when the server
    /// allows it (the RFC's default), else `client_secret_post`.
    pub fn for_secret(server: &ServerMetadata) -> Result<Self, AuthError> {
        [Self::Basic, Self::Post]
            .into_iter()
            .find(|m| server.accepts_auth(m.name()))
            .ok_or(AuthError::NoAuthMethod {
                have: "a client secret",
            })
    }

    /// The method for a client with a private key: `private_key_jwt`, when listed.
    pub fn for_key(server: &ServerMetadata) -> Result<Self, AuthError> {
        if server.accepts_auth(Self::PrivateKeyJwt.name()) {
            Ok(Self::PrivateKeyJwt)
        } else {
            Err(AuthError::NoAuthMethod {
                have: "a private key",
            })
        }
    }
}

/// The grant a token request asks for. Its `Debug` names the grant only: it holds a code,
/// a verifier or a refresh token.
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grant<'a> {
    /// `client_credentials`: the client acts for itself.
    ClientCredentials,
    /// `authorization_code` with the PKCE verifier and the redirect URI used.
    Code {
        /// The code from the redirect.
        code: &'a str,
        /// The PKCE verifier whose challenge went with the authorization request.
        verifier: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
    },
    /// `refresh_token`.
    Refresh(&'a str),
    /// The JWT bearer grant (RFC 7523 §2.1): a JWT someone else issued stands for the
    /// client's authorization (a workload's platform token, SEP-1933; an ID-JAG,
    /// SEP-990).
    JwtBearer(&'a str),
    /// Token exchange (RFC 8693) of an identity assertion the enterprise's identity
    /// provider issued for an ID-JAG (an Identity Assertion JWT Authorization Grant,
    /// SEP-990) meant for the authorization server `audience`.
    IdJag {
        /// The identity assertion (an OpenID Connect ID token, or a SAML assertion).
        subject_token: &'a str,
        /// What it is.
        subject_token_type: SubjectType,
        /// The issuer of the authorization server that will redeem the ID-JAG.
        audience: &'a str,
    },
}

/// The kind of identity assertion exchanged for an ID-JAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubjectType {
    /// An OpenID Connect ID token.
    IdToken,
    /// A SAML 2.0 assertion.
    Saml2,
}

impl SubjectType {
    /// The token type URI (RFC 8693 §3).
    pub fn uri(self) -> &'static str {
        match self {
            Self::IdToken => "urn:ietf:params:oauth:token-type:id_token",
            Self::Saml2 => "urn:ietf:params:oauth:token-type:saml2",
        }
    }
}

/// The `grant_type` of token exchange (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an ID-JAG (SEP-990).
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

impl std::fmt::Debug for Grant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ClientCredentials => "ClientCredentials",
            Self::Code { .. } => "Code",
            Self::Refresh(_) => "Refresh",
            Self::JwtBearer(_) => "JwtBearer",
            Self::IdJag { .. } => "IdJag",
        })
    }
}

/// The form of a token request, without client authentication (see [`client_form`]).
pub fn grant_form(grant: Grant<'_>, resource: &str, scope: Option<&str>) -> Form {
    let mut form = Form::default();
    match grant {
        Grant::ClientCredentials => form.add("grant_type", "client_credentials"),
        Grant::Code {
            code,
            verifier,
            redirect_uri,
        } => {
            form.add("grant_type", "authorization_code");
            form.add("code", code);
            form.add("code_verifier", verifier);
            form.add("redirect_uri", redirect_uri);
        }
        Grant::Refresh(token) => {
            form.add("grant_type", "refresh_token");
            form.add("refresh_token", token);
        }
        Grant::JwtBearer(assertion) => {
            form.add("grant_type", JWT_BEARER);
            form.add("assertion", assertion);
        }
        Grant::IdJag {
            subject_token,
            subject_token_type,
            audience,
        } => {
            form.add("grant_type", TOKEN_EXCHANGE);
            form.add("requested_token_type", ID_JAG);
            form.add("subject_token", subject_token);
            form.add("subject_token_type", subject_token_type.uri());
            form.add("audience", audience);
        }
    }
    form.add("resource", resource);
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        form.add("scope", scope);
    }
    form
}

/// Adds the client's identity to `form` as `auth` wants it; returns the `Authorization`
/// header value for `client_secret_basic`. `secret` is the client secret, or the signed
/// assertion for `private_key_jwt`.
pub fn client_form(
    form: &mut Form,
    auth: ClientAuth,
    client_id: &str,
    secret: &str,
) -> Option<String> {
    match auth {
        ClientAuth::Basic => {
            // Every form a peer could echo is known before the header exists.
            crate::text::learn_basic(client_id, secret);
            // RFC 6749 §2.3.1: both parts form-encoded before they are joined.
            let pair = format!("{}:{}", encode(client_id), encode(secret));
            let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
            return Some(format!("Basic {b64}"));
        }
        ClientAuth::Post => {
            form.add("client_id", client_id);
            form.add("client_secret", secret);
        }
        ClientAuth::PrivateKeyJwt => {
            form.add("client_id", client_id);
            form.add(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            );
            form.add("client_assertion", secret);
        }
        ClientAuth::None => form.add("client_id", client_id),
    }
    None
}

/// An `application/x-www-form-urlencoded` body. Its `Debug` shows the names only: the
/// values hold secrets.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Form {
    body: String,
    names: Vec<&'static str>,
}

impl Form {
    /// Appends `name=value`, both encoded.
    pub fn add(&mut self, name: &'static str, value: &str) {
        if !self.body.is_empty() {
            self.body.push('&');
        }
        self.body.push_str(&encode(name));
        self.body.push('=');
        self.body.push_str(&encode(value));
        self.names.push(name);
    }

    /// The encoded body.
    pub fn body(&self) -> &str {
        &self.body
    }
}

impl std::fmt::Debug for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Form").field("names", &self.names).finish()
    }
}

/// Form encoding (WHATWG `application/x-www-form-urlencoded`): unreserved bytes as they
/// are, space as `+`, everything else `%XX`.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for &b in value.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The longest OAuth error code shown.
const MAX_ERROR_CODE: usize = 64;

/// `error` as an OAuth error code when it looks like one (lower-case letters, digits and
/// `_`, at most 64 bytes, as every registered code is); anything else is not shown: a
/// server may put any text there, a secret it was sent included.
pub fn error_code(error: &str) -> Option<&str> {
    (!error.is_empty()
        && error.len() <= MAX_ERROR_CODE
        && error
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
    .then_some(error)
}

/// A token endpoint's successful answer. Its tokens are [`Secret`]s from the moment they
/// are read, so every form of them is known to the redaction step before either is
/// sent; its `Debug` never shows them.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[non_exhaustive]
pub struct Token {
    /// The access token.
    pub access_token: Secret,
    /// `Bearer` (compared without case).
    pub token_type: String,
    /// Lifetime in whole seconds, when the server gave a usable one: a number or a
    /// numeric string of at least one second. Zero, a negative number, a value past
    /// `u64` or text that is no number count as no lifetime stated (see
    /// [`lifetime`]).
    #[serde(default, deserialize_with = "lifetime")]
    pub expires_in: Option<u64>,
    /// A refresh token, when given.
    #[serde(default)]
    pub refresh_token: Option<Secret>,
    /// The scopes granted, when the server says.
    #[serde(default)]
    pub scope: Option<String>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// Whether it is DPoP-bound (`token_type` `DPoP`, RFC 9449 §5): each request that
    /// carries it needs a proof with the client's key.
    pub fn is_dpop(&self) -> bool {
        self.token_type
            .eq_ignore_ascii_case(super::dpop::TOKEN_TYPE)
    }
}

/// Reads a token endpoint's answer: a `Bearer` token on 200, else the endpoint's
/// refusal with its `error` code (never its description, which may echo a secret).
pub fn read_token(status: u16, body: &[u8]) -> Result<Token, AuthError> {
    read_token_with(status, body, false)
}

/// [`read_token`] for a request that carried a DPoP proof (`proof_sent`): a `DPoP`
/// token is then taken too (and a `Bearer` one, which a server that ignores DPoP
/// issues). A `DPoP` token for a request without a proof is refused: the client holds
/// no key it is bound to.
pub fn read_token_with(status: u16, body: &[u8], proof_sent: bool) -> Result<Token, AuthError> {
    if status != 200 {
        #[derive(serde::Deserialize)]
        struct Refusal {
            error: String,
        }
        let error = serde_json::from_slice::<Refusal>(body)
            .ok()
            .and_then(|r| error_code(&r.error).map(str::to_owned));
        return Err(AuthError::TokenRefused { status, error });
    }
    let token: Token = serde_json::from_slice(body).map_err(|_| AuthError::Document {
        what: "token response",
        why: "it is not a token response",
    })?;
    if token.is_dpop() && !proof_sent {
        return Err(AuthError::Document {
            what: "token response",
            why: "it holds a DPoP-bound token, though no DPoP proof was sent",
        });
    }
    let bearer = token.token_type.eq_ignore_ascii_case("bearer") || token.is_dpop();
    if !bearer || token.access_token.expose().is_empty() {
        return Err(AuthError::Document {
            what: "token response",
            why: "it does not hold a bearer token",
        });
    }
    if !sendable(token.access_token.expose()) {
        return Err(AuthError::Document {
            what: "token response",
            why: "its access token holds characters an Authorization header cannot carry",
        });
    }
    Ok(token)
}

/// Reads a token exchange's answer (RFC 8693 §2.2): the ID-JAG on 200, checked to be
/// one (`issued_token_type` the ID-JAG's, a compact JWT of bounded size) and a
/// [`Secret`] from the moment it is read; else the refusal with its `error` code only.
pub fn read_id_jag(status: u16, body: &[u8]) -> Result<Secret, AuthError> {
    if status != 200 {
        return read_token(status, body).map(|t| t.access_token);
    }
    #[derive(serde::Deserialize)]
    struct Exchanged {
        access_token: Secret,
        issued_token_type: String,
    }
    let not = |why| AuthError::Document {
        what: "token exchange response",
        why,
    };
    let answer: Exchanged =
        serde_json::from_slice(body).map_err(|_| not("it is not a token exchange response"))?;
    if answer.issued_token_type != ID_JAG {
        return Err(not("it issued no ID-JAG"));
    }
    super::jwt::grant_jwt(answer.access_token.expose())
        .map_err(|_| not("its ID-JAG is not a compact JWT of bounded size"))?;
    Ok(answer.access_token)
}

/// Whether `token` can go in an `Authorization` header as it is: visible ASCII only (no
/// control character, DEL, space or byte past ASCII).
fn sendable(token: &str) -> bool {
    token.bytes().all(|b| b.is_ascii_graphic())
}

/// Reads `expires_in` as the host uses it: whole seconds when the value is a number or a
/// numeric string of at least one second (a fraction is dropped); `None`, meaning no
/// lifetime stated, for zero, a negative number, a number past `u64`, or anything else.
/// A token without a lifetime is used until a server refuses it, then renewed.
pub fn lifetime<'de, D>(deserializer: D) -> Result<Option<u64>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    // As text: a number past `f64` (`1e400`) is no lifetime, not an unreadable token.
    let raw = <Option<Box<RawValue>> as serde::Deserialize>::deserialize(deserializer)?;
    let text = raw.as_deref().map_or("null", RawValue::get);
    let seconds = match text.bytes().next() {
        Some(b'-' | b'0'..=b'9') => text
            .parse::<u64>()
            .ok()
            .or_else(|| whole(text.parse().ok())),
        Some(b'"') => serde_json::from_str::<String>(text).ok().and_then(|s| {
            let s = s.trim();
            s.parse::<u64>()
                .ok()
                .or_else(|| whole(s.parse::<f64>().ok()))
        }),
        _ => None,
    };
    Ok(seconds.filter(|&s| s > 0))
}

/// A finite, non-negative number of seconds below `u64::MAX`, its fraction dropped.
fn whole(seconds: Option<f64>) -> Option<u64> {
    // Checked to be finite, non-negative and below u64::MAX before the cast.
    seconds
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 18_446_744_073_709_551_615.0)
        .map(|s| s as u64)
}

#[cfg(test)]
#[path = "token_tests.rs"]
mod tests;
