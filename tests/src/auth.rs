//! A small OAuth authorization server for the end-to-end tests, which also serves the
//! MCP server's protected resource metadata: client credentials (basic, post), the
//! authorization code grant with PKCE, and a hook for [`TestServer`](crate::server) that
//! refuses any token it did not issue. It records every request, so a test can say where
//! each secret went; its hostile settings name other issuers or echo secrets back.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use brain_mcp_proto::auth::code::decode;

use crate::server::{RawReply, Seen};

mod token;
use token::token;

/// How the authorization server behaves.
#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// The MCP server's URL: the resource its metadata names.
    pub resource: String,
    /// The accepted client id and secret.
    pub client_id: String,
    /// The accepted client secret.
    pub client_secret: String,
    /// `token_endpoint_auth_methods_supported`.
    pub auth_methods: Vec<String>,
    /// `expires_in` of every token.
    pub expires_in: Option<u64>,
    /// The issuer the resource metadata names (default: this server).
    pub listed_issuer: Option<String>,
    /// The issuer the server's own metadata names (default: this server).
    pub metadata_issuer: Option<String>,
    /// Every token request is refused with an error description echoing what was sent.
    pub refuse_tokens: bool,
    /// Refresh tokens are issued with access tokens.
    pub refresh_tokens: bool,
    /// Each refresh token is good once (rotation); one presented again revokes the whole
    /// grant, every access and refresh token issued (reuse detection, counted in
    /// [`TestAuthServer::revocations`]).
    pub rotate_refresh_tokens: bool,
    /// The next this many token requests are recorded, then never answered (a minute's
    /// wait, then 503): a client killed meanwhile dies holding whatever it held.
    pub hang_token_requests: u32,
    /// Token responses are sent this long after the request was handled (a refresh
    /// token presented is spent at once, before the answer leaves).
    pub token_delay: Option<std::time::Duration>,
    /// Every token response carries this access token instead of the one issued (a
    /// hostile server's choice; the MCP server still accepts only tokens issued).
    pub access_token: Option<String>,
    /// The JWTs accepted as a JWT bearer grant's `assertion` (RFC 7523 §2.1), from the
    /// client `client_id` authenticating with its id alone.
    pub assertions: Vec<String>,
    /// Tokens asked for with a DPoP proof are DPoP-bound (`token_type` `DPoP`).
    pub dpop: bool,
    /// Every token is issued as `DPoP`, proof or not (a server that binds tokens the
    /// client never asked to have bound).
    pub dpop_unasked: bool,
    /// [`TestAuthServer::dpop_guard`] demands a new nonce for every request.
    pub dpop_nonce_every_request: bool,
    /// As an enterprise identity provider: the identity assertions it exchanges for
    /// ID-JAGs ([`jag_name`]) at its token endpoint (RFC 8693).
    pub identity_assertions: Vec<String>,
}

impl AuthConfig {
    /// Client credentials for `client_id` / `client_secret`, basic or post, tokens for an
    /// hour, guarding `resource`.
    pub fn new(resource: &str, client_id: &str, client_secret: &str) -> Self {
        Self {
            resource: resource.to_owned(),
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            auth_methods: vec!["client_secret_basic".into(), "client_secret_post".into()],
            expires_in: Some(3600),
            listed_issuer: None,
            metadata_issuer: None,
            refuse_tokens: false,
            refresh_tokens: false,
            rotate_refresh_tokens: false,
            hang_token_requests: 0,
            token_delay: None,
            access_token: None,
            assertions: Vec::new(),
            dpop: false,
            dpop_unasked: false,
            dpop_nonce_every_request: false,
            identity_assertions: Vec::new(),
        }
    }
}

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct AuthSeen {
    /// `GET` or `POST`.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The body as text.
    pub body: String,
    /// The `DPoP` proof header, if any.
    pub dpop: Option<String>,
}

impl AuthSeen {
    /// Whether this was a token request.
    pub fn is_token_request(&self) -> bool {
        self.method == "POST" && self.path == "/token"
    }

    /// A form field of the body.
    pub fn form(&self, name: &str) -> Option<String> {
        self.body.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| decode(v))
        })
    }
}

struct State {
    config: AuthConfig,
    origin: String,
    seen: Vec<AuthSeen>,
    valid: HashSet<String>,
    issued: u32,
    challenges: Vec<String>,
    /// What the DPoP guard saw: each proof's method, claims and the token it carried.
    proofs: Vec<ProofSeen>,
    /// The nonce the DPoP guard wants next, and how many it demanded.
    nonce: u32,
    nonce_demands: u32,
    /// ID-JAGs issued.
    jags: u32,
    /// Refresh tokens not used yet, and used ones (with rotation).
    refresh_live: HashSet<String>,
    refresh_used: HashSet<String>,
    /// Grants revoked for a refresh token's reuse.
    revocations: u32,
}

/// One DPoP proof the MCP server's guard saw.
#[derive(Clone, Debug)]
pub struct ProofSeen {
    /// The request's HTTP method.
    pub http_method: String,
    /// The proof as sent.
    pub proof: String,
    /// Its claims.
    pub claims: Value,
    /// Whether the request's `Authorization` used the `DPoP` scheme.
    pub dpop_scheme: bool,
}

/// A running authorization server; stops when dropped.
pub struct TestAuthServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestAuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestAuthServer")
            .field("addr", &self.addr)
            .finish()
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TestAuthServer {
    /// Starts the server on a free port of 127.0.0.1.
    #[allow(clippy::expect_used)] // a test helper: a server that cannot start fails the test
    pub fn start(config: AuthConfig) -> Self {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("address");
        let state = Arc::new(Mutex::new(State {
            config,
            origin: format!("http://127.0.0.1:{}", addr.port()),
            seen: Vec::new(),
            valid: HashSet::new(),
            issued: 0,
            challenges: Vec::new(),
            proofs: Vec::new(),
            nonce: 0,
            nonce_demands: 0,
            jags: 0,
            refresh_live: HashSet::new(),
            refresh_used: HashSet::new(),
            revocations: 0,
        }));
        let (shutdown, mut stop) = oneshot::channel::<()>();
        let shared = state.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                loop {
                    tokio::select! {
                        _ = &mut stop => break,
                        Ok((stream, _)) = listener.accept() => {
                            let shared = shared.clone();
                            tokio::spawn(async move {
                                let service = service_fn(move |req| {
                                    let shared = shared.clone();
                                    async move { Ok::<_, Infallible>(handle(req, &shared).await) }
                                });
                                let _ = http1::Builder::new()
                                    .serve_connection(TokioIo::new(stream), service)
                                    .await;
                            });
                        }
                    }
                }
            });
        });
        Self {
            addr,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, the issuer.
    pub fn url(&self) -> String {
        lock(&self.state).origin.clone()
    }

    /// Where the resource metadata is (named in the MCP server's challenges).
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/prm", self.url())
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<AuthSeen> {
        lock(&self.state).seen.clone()
    }

    /// The token requests so far.
    pub fn token_requests(&self) -> Vec<AuthSeen> {
        self.seen()
            .into_iter()
            .filter(AuthSeen::is_token_request)
            .collect()
    }

    /// The tokens issued so far, in order.
    pub fn issued(&self) -> Vec<String> {
        let n = lock(&self.state).issued;
        (1..=n).map(token_name).collect()
    }

    /// How many times a refresh token's reuse revoked the grant.
    pub fn revocations(&self) -> u32 {
        lock(&self.state).revocations
    }

    /// Makes every token issued so far invalid at the MCP server.
    pub fn revoke_all(&self) {
        lock(&self.state).valid.clear();
    }

    /// An authorization server for `client_id` / `client_secret` and an MCP server of
    /// `era` it guards (the resource its metadata names).
    pub fn guarding(
        era: crate::server::Era,
        client_id: &str,
        client_secret: &str,
    ) -> (Self, crate::server::TestServer) {
        let auth = Self::start(AuthConfig::new("", client_id, client_secret));
        let config = crate::server::ServerConfig::new(era).hook(auth.guard());
        let server = crate::server::TestServer::start(config);
        auth.configure(|c| c.resource = server.url());
        (auth, server)
    }

    /// [`Self::revoke_all`] as a function a server hook can hold.
    pub fn revoker(&self) -> impl Fn() + Send + Sync + 'static {
        let state = self.state.clone();
        move || lock(&state).valid.clear()
    }

    /// Changes the configuration from now on.
    pub fn configure(&self, f: impl FnOnce(&mut AuthConfig)) {
        f(&mut lock(&self.state).config);
    }

    /// The `WWW-Authenticate` values the MCP server sent, in order.
    pub fn challenges(&self) -> Vec<String> {
        lock(&self.state).challenges.clone()
    }

    /// The DPoP proofs the guard saw, in order.
    pub fn proofs(&self) -> Vec<ProofSeen> {
        lock(&self.state).proofs.clone()
    }

    /// How many times the guard asked for a new nonce.
    pub fn nonce_demands(&self) -> u32 {
        lock(&self.state).nonce_demands
    }

    /// A hook like [`Self::guard`] for DPoP-bound tokens (RFC 9449 §7): a request passes
    /// with `Authorization: DPoP <token issued>` and a proof whose `htm`, `htu` (no
    /// query), `ath` and unused `jti` fit it, and, with `dpop_nonce_every_request`, the
    /// nonce asked for last (a new one is asked for after every request that passes).
    /// `htu` must be the configured resource. Signatures are not checked. Anything else
    /// gets a `DPoP` challenge.
    pub fn dpop_guard(&self) -> impl Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync + 'static {
        let state = self.state.clone();
        let metadata = self.resource_metadata_url();
        move |seen| {
            let mut state = lock(&state);
            let challenge = format!("DPoP resource_metadata=\"{metadata}\"");
            let refuse = |state: &mut State, challenge: String| {
                state.challenges.push(challenge.clone());
                Some(RawReply::json(401, "{}").header("www-authenticate", &challenge))
            };
            let authorization = seen
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let (scheme, token) = authorization.split_once(' ').unwrap_or(("", ""));
            let proof = seen
                .headers
                .get("dpop")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let claims: Value = proof
                .split('.')
                .nth(1)
                .and_then(|c| URL_SAFE_NO_PAD.decode(c).ok())
                .and_then(|c| serde_json::from_slice(&c).ok())
                .unwrap_or(Value::Null);
            if !proof.is_empty() {
                state.proofs.push(ProofSeen {
                    http_method: seen.http_method.to_owned(),
                    proof: proof.clone(),
                    claims: claims.clone(),
                    dpop_scheme: scheme == "DPoP",
                });
            }
            let ath = URL_SAFE_NO_PAD.encode(ring::digest::digest(
                &ring::digest::SHA256,
                token.as_bytes(),
            ));
            let jti = claims["jti"].as_str().unwrap_or("");
            let replayed = state
                .proofs
                .iter()
                .filter(|p| p.claims["jti"].as_str() == Some(jti))
                .count()
                > 1;
            let fits = scheme == "DPoP"
                && state.valid.contains(token)
                && claims["htm"].as_str() == Some(seen.http_method)
                && claims["htu"].as_str() == Some(state.config.resource.as_str())
                && claims["ath"].as_str() == Some(ath.as_str())
                && !jti.is_empty()
                && !replayed;
            if !fits {
                return refuse(&mut state, challenge);
            }
            if state.config.dpop_nonce_every_request {
                let wanted = format!("rs-nonce-{}", state.nonce);
                if claims["nonce"].as_str() != Some(wanted.as_str()) {
                    state.nonce_demands += 1;
                    let challenge =
                        format!("DPoP error=\"use_dpop_nonce\", resource_metadata=\"{metadata}\"");
                    state.challenges.push(challenge.clone());
                    return Some(
                        RawReply::json(401, "{}")
                            .header("www-authenticate", &challenge)
                            .header("dpop-nonce", &wanted),
                    );
                }
                // The next request needs a new one.
                state.nonce += 1;
            }
            None
        }
    }

    /// A [`TestServer`](crate::server::TestServer) hook that answers 401, with a challenge
    /// naming this server's resource metadata, to any request without a token it issued.
    pub fn guard(&self) -> impl Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync + 'static {
        let state = self.state.clone();
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}\"",
            self.resource_metadata_url()
        );
        move |seen| {
            let mut state = lock(&state);
            if seen.bearer().is_some_and(|t| state.valid.contains(t)) {
                return None;
            }
            state.challenges.push(challenge.clone());
            Some(RawReply::json(401, "{}").header("www-authenticate", &challenge))
        }
    }
}

impl Drop for TestAuthServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The `n`th access token: no two share 8 consecutive characters past their prefix, so a
/// test can tell which one was printed.
pub fn token_name(n: u32) -> String {
    format!("tok-{n}-{:012x}", spread(n))
}

/// The `n`th ID-JAG an identity provider issues: a compact JWT in form.
pub fn jag_name(n: u32) -> String {
    format!(
        "eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.eyJqYWciOi{n:04}.amFnLXNpZ25hdHVyZS{:012x}",
        spread(n.wrapping_add(0x7a9))
    )
}

/// The `n`th refresh token.
pub fn refresh_name(n: u32) -> String {
    format!("refresh-{n}-{:012x}", spread(n.wrapping_add(0x5bd1)))
}

/// A fixed scramble of `n` (splitmix64), 48 bits of it.
fn spread(n: u32) -> u64 {
    let mut z = u64::from(n).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & 0xffff_ffff_ffff
}

async fn handle(req: Request<Incoming>, state: &Arc<Mutex<State>>) -> Response<Full<Bytes>> {
    let token = req.uri().path() == "/token";
    let delay = lock(state).config.token_delay.filter(|_| token);
    let response = handle_now(req, state).await;
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    response
}

async fn handle_now(req: Request<Incoming>, state: &Arc<Mutex<State>>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let seen = AuthSeen {
        method: parts.method.as_str().to_owned(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(String::new, |p| p.as_str().to_owned()),
        authorization: parts
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body: String::from_utf8_lossy(&body).into_owned(),
        dpop: parts
            .headers
            .get("dpop")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    };
    let hang = {
        let mut state = lock(state);
        let hang = parts.uri.path() == "/token" && state.config.hang_token_requests > 0;
        if hang {
            state.config.hang_token_requests -= 1;
            state.seen.push(seen.clone());
        }
        hang
    };
    if hang {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        return reply(503, &json!({"error": "temporarily_unavailable"}));
    }
    let mut state = lock(state);
    state.seen.push(seen.clone());
    let origin = state.origin.clone();
    let config = state.config.clone();
    match (seen.method.as_str(), parts.uri.path()) {
        ("GET", "/prm") => reply(
            200,
            &json!({
                "resource": config.resource,
                "authorization_servers": [config.listed_issuer.unwrap_or_else(|| origin.clone())],
            }),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => reply(
            200,
            &json!({
                "issuer": config.metadata_issuer.unwrap_or_else(|| origin.clone()),
                "token_endpoint": format!("{origin}/token"),
                "authorization_endpoint": format!("{origin}/authorize"),
                "token_endpoint_auth_methods_supported": config.auth_methods,
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["client_credentials", "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
            }),
        ),
        ("GET", "/authorize") => authorize(&seen, &origin),
        ("POST", "/token") => token(&seen, &mut state, &config),
        _ => reply(404, &json!({"error": "not_found"})),
    }
}

/// Approves at once: 302 back to the redirect URI with a code that is the PKCE challenge
/// (so the token endpoint can check the verifier without keeping state).
fn authorize(seen: &AuthSeen, origin: &str) -> Response<Full<Bytes>> {
    let query = seen
        .path
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or_default();
    let param = |name: &str| {
        query.split('&').find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k == name).then(|| decode(v))
        })
    };
    let redirect = param("redirect_uri").unwrap_or_default();
    let location = format!(
        "{redirect}?code=code-{}&state={}&iss={}",
        param("code_challenge").unwrap_or_default(),
        param("state").unwrap_or_default(),
        origin
    );
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::FOUND;
    if let Ok(value) = location.parse() {
        resp.headers_mut().insert("location", value);
    }
    resp
}

fn reply(status: u16, body: &Value) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body.to_string())));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/json"),
    );
    resp
}
