//! A client's proof of identity at a token endpoint, read from the environment when a
//! token is needed (so a rotated secret takes effect on the next token), and the
//! signature of a `private_key_jwt` assertion.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use brain_mcp_proto::auth::code::Registered;
use brain_mcp_proto::auth::jwt::{self, Alg};
use brain_mcp_proto::auth::metadata::ServerMetadata;
use brain_mcp_proto::auth::token::{ClientAuth, Form, client_form};
use brain_mcp_proto::text::Secrets;
use brain_tools_core::{Secret, SecretVar};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;

use super::failure::AuthFailure;
use super::given::{ClientProof, IdentityAssertion, OAuthClient};

/// The most bytes of a PEM key read from the environment.
const MAX_KEY_BYTES: usize = 16 * 1024;
/// The most bytes of a workload token file read (its JWT is bounded again by the core).
const MAX_WORKLOAD_FILE_BYTES: u64 = 64 * 1024;

/// Who the client is at a token endpoint, and what proves it (nothing, for a public
/// client). Its `Debug` shows the client id and method, never the proof.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) client_id: String,
    pub(crate) proof: Option<ClientProof>,
    /// The method registered for the client, when registration said; else the server's
    /// metadata decides.
    pub(crate) method: Option<ClientAuth>,
    /// Whether a peer issued them (a registration's answer): its secret is then kept
    /// process-wide only if it looks like a credential.
    pub(crate) issued: bool,
    /// An enterprise user's identity to exchange for an ID-JAG (SEP-990).
    pub(crate) enterprise: Option<std::sync::Arc<IdentityAssertion>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

/// The secret or key read for one token request.
enum Proof {
    Secret(Secret),
    Key(Box<Signer>),
}

/// A private key that signs assertions.
enum Signer {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl Credentials {
    /// The credentials `client` was given, if it was given a client id.
    pub(crate) fn of(client: &OAuthClient) -> Option<Self> {
        Some(Self {
            client_id: client.client_id.clone()?,
            proof: client.proof.clone(),
            method: None,
            issued: false,
            enterprise: client.enterprise.clone(),
        })
    }

    /// The credentials a registration issued.
    pub(crate) fn registered(got: &Registered, server: &ServerMetadata) -> Self {
        Self {
            client_id: got.client_id.clone(),
            proof: got
                .client_secret
                .as_ref()
                .map(|s| ClientProof::Secret(Secret::new(s.clone()))),
            method: Some(got.auth(server)),
            issued: true,
            enterprise: None,
        }
    }

    /// The client secret's value, when the proof is one (read from the environment
    /// again if it lives there), to remember as a secret of the server's calls.
    pub(crate) fn secret_value(&self) -> Option<String> {
        match self.proof.as_ref()? {
            ClientProof::Secret(s) => Some(s.expose().to_owned()),
            ClientProof::Env(SecretVar::Secret(var)) => std::env::var(var).ok(),
            _ => None,
        }
    }

    /// A short digest of the proof (never the proof): credentials that rotate get new
    /// tokens rather than the old secret's.
    pub(crate) fn fingerprint(&self) -> String {
        let text = match &self.proof {
            Some(ClientProof::Secret(s) | ClientProof::PrivateKeyPem(s)) => s.expose().to_owned(),
            Some(ClientProof::Env(SecretVar::Secret(var))) => format!("env:{var}"),
            Some(ClientProof::Env(SecretVar::Key(var))) => format!("key-env:{var}"),
            Some(ClientProof::Env(SecretVar::WorkloadEnv(var))) => format!("workload-env:{var}"),
            Some(ClientProof::Env(SecretVar::WorkloadFile(path))) => {
                format!("workload-file:{path}")
            }
            Some(ClientProof::WorkloadJwt(jwt)) => format!("workload:{}", jwt.expose()),
            Some(ClientProof::Env(_)) => "other".to_owned(),
            None => "public".to_owned(),
        };
        let text = match &self.enterprise {
            // A new assertion (the old one expired) is new credentials.
            Some(idp) => format!(
                "{text}|idp:{}|{}",
                idp.token_endpoint,
                idp.assertion.expose()
            ),
            None => text,
        };
        let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        URL_SAFE_NO_PAD.encode(&digest.as_ref()[..12])
    }

    /// Adds the client's identity to a token request's `form` as `server` allows it;
    /// returns the `Authorization` value for `client_secret_basic` and the secrets to
    /// remove from whatever the token endpoint says. Errors name the variable, never
    /// its value.
    pub(crate) fn apply(
        &self,
        form: &mut Form,
        server: &ServerMetadata,
        issuer: &str,
    ) -> Result<(Option<String>, Secrets), AuthFailure> {
        let Some(proof) = self.proof.as_ref().filter(|p| !p.is_workload()) else {
            // A public client, or one whose grant is a workload token: its id alone.
            client_form(form, ClientAuth::None, &self.client_id, "");
            return Ok((None, Secrets::none()));
        };
        match self.read(proof)? {
            Proof::Secret(secret) => {
                let auth = match self.method {
                    Some(method @ (ClientAuth::Basic | ClientAuth::Post)) => method,
                    _ => ClientAuth::for_secret(server)
                        .map_err(|e| AuthFailure::server(e.to_string()))?,
                };
                let basic = client_form(form, auth, &self.client_id, secret.expose());
                let secrets = Secrets::new([secret.expose().to_owned()]).with(
                    basic
                        .iter()
                        .map(|b| b.trim_start_matches("Basic ").to_owned()),
                );
                Ok((basic, secrets))
            }
            Proof::Key(signer) => {
                let auth =
                    ClientAuth::for_key(server).map_err(|e| AuthFailure::server(e.to_string()))?;
                let assertion = signer.assertion(&self.client_id, issuer)?;
                client_form(form, auth, &self.client_id, &assertion);
                Ok((None, Secrets::new([assertion])))
            }
        }
    }

    /// The workload token, when the proof is one: read afresh (a file the platform
    /// rotated, a variable), checked to be a compact JWT of bounded size, and known to the
    /// redaction step before it goes anywhere. Errors name the file or variable, never
    /// the value.
    pub(crate) async fn workload(&self) -> Result<Option<Secret>, AuthFailure> {
        let (text, source) = match &self.proof {
            Some(ClientProof::WorkloadJwt(jwt)) => (jwt.expose().to_owned(), String::new()),
            Some(ClientProof::Env(SecretVar::WorkloadEnv(var))) => {
                let text = std::env::var(var).map_err(|_| {
                    AuthFailure::config(format!(
                        "environment variable {var} is not set or not Unicode"
                    ))
                })?;
                (text, format!("environment variable {var} "))
            }
            Some(ClientProof::Env(SecretVar::WorkloadFile(path))) => {
                (read_workload_file(path).await?, format!("the file {path} "))
            }
            _ => return Ok(None),
        };
        // Known in every form before anything else happens to it, even if it is refused;
        // text too long to be a grant's JWT is refused first and never kept (a file
        // pointed at the wrong thing must not crowd the host's secrets out).
        if text.trim().len() > jwt::MAX_GRANT_JWT_BYTES {
            return Err(AuthFailure::config(format!(
                "the workload token {source}holds more than {} bytes",
                jwt::MAX_GRANT_JWT_BYTES
            )));
        }
        brain_mcp_proto::text::learn(text.trim());
        let jwt = jwt::grant_jwt(&text)
            .map_err(|why| AuthFailure::config(format!("the workload token {source}{why}")))?;
        brain_mcp_proto::text::learn_jwt(jwt);
        Ok(Some(Secret::new(jwt)))
    }

    /// The proof, read afresh (a rotated secret takes effect now), every form of it known
    /// to the redaction step before it is used.
    fn read(&self, proof: &ClientProof) -> Result<Proof, AuthFailure> {
        let proof = Self::read_raw(proof)?;
        if let Proof::Secret(secret) = &proof {
            if self.issued {
                brain_mcp_proto::text::learn_basic_issued(&self.client_id, secret.expose());
            } else {
                super::given::learn_proof(Some(&self.client_id), secret.expose(), false);
            }
        }
        Ok(proof)
    }

    fn read_raw(proof: &ClientProof) -> Result<Proof, AuthFailure> {
        match proof {
            ClientProof::Secret(secret) => Ok(Proof::Secret(secret.clone())),
            ClientProof::PrivateKeyPem(pem) => {
                super::given::learn_proof(None, pem.expose(), true);
                Signer::from_pem(pem.expose().as_bytes())
                    .map(|s| Proof::Key(Box::new(s)))
                    .map_err(|why| AuthFailure::config(format!("the private key {why}")))
            }
            ClientProof::Env(SecretVar::Secret(var)) => Secret::from_env(var)
                .map(Proof::Secret)
                .map_err(|e| AuthFailure::config(e.to_string())),
            ClientProof::Env(SecretVar::Key(var)) => {
                let pem = std::env::var(var).map_err(|_| {
                    AuthFailure::config(format!(
                        "environment variable {var} is not set or not Unicode"
                    ))
                })?;
                if pem.len() > MAX_KEY_BYTES {
                    return Err(AuthFailure::config(format!(
                        "environment variable {var} holds more than {MAX_KEY_BYTES} bytes"
                    )));
                }
                super::given::learn_proof(None, &pem, true);
                Signer::from_pem(pem.as_bytes())
                    .map(|s| Proof::Key(Box::new(s)))
                    .map_err(|why| AuthFailure::config(format!("environment variable {var} {why}")))
            }
            _ => Err(AuthFailure::config(
                "this kind of client credential is not supported",
            )),
        }
    }
}

/// How long reading the workload token file may take (a hung network mount, a FIFO).
const WORKLOAD_READ_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// The workload token file's text, at most [`MAX_WORKLOAD_FILE_BYTES`], read on the
/// blocking pool (a file system may be slow) within [`WORKLOAD_READ_DEADLINE`]; only a
/// regular file is read (a FIFO or a device could block for ever).
async fn read_workload_file(path: &str) -> Result<String, AuthFailure> {
    use std::io::Read as _;
    let cannot = |what: &str| AuthFailure::config(format!("the workload token file {path} {what}"));
    let owned = path.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        // Checked before opening too: opening a FIFO blocks until a writer comes.
        if !std::fs::metadata(&owned).is_ok_and(|m| m.is_file()) {
            return Err("is not a regular file that can be read");
        }
        let file = std::fs::File::open(&owned).map_err(|_| "cannot be opened")?;
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err("is not a regular file");
        }
        let mut bytes = Vec::new();
        file.take(MAX_WORKLOAD_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| "cannot be read")?;
        if bytes.len() as u64 > MAX_WORKLOAD_FILE_BYTES {
            return Err("holds more than 64 KiB");
        }
        String::from_utf8(bytes).map_err(|_| "is not UTF-8")
    });
    let read = tokio::time::timeout(WORKLOAD_READ_DEADLINE, read)
        .await
        .map_err(|_| cannot("could not be read in time"))?
        .map_err(|_| cannot("could not be read"))?;
    read.map_err(cannot)
}

impl Signer {
    /// A PKCS #8 P-256 or RSA key, or a SEC1 P-256 key, from PEM.
    fn from_pem(pem: &[u8]) -> Result<Self, &'static str> {
        let key = PrivateKeyDer::from_pem_slice(pem).map_err(|_| "holds no PEM private key")?;
        let rng = SystemRandom::new();
        let der = key.secret_der();
        if let PrivateKeyDer::Pkcs8(_) = key {
            if let Ok(ec) =
                EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            {
                return Ok(Self::Ec(ec));
            }
            return RsaKeyPair::from_pkcs8(der)
                .map(Self::Rsa)
                .map_err(|_| "holds a key that is neither P-256 nor RSA");
        }
        Err("holds a key that is not PKCS #8 (convert it with openssl pkcs8 -topk8 -nocrypt)")
    }

    /// A signed assertion for `client_id` with the authorization server as audience.
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthFailure> {
        let rng = SystemRandom::new();
        let mut id = [0u8; 16];
        rng.fill(&mut id)
            .map_err(|_| AuthFailure::host("no randomness for the assertion id"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let alg = match self {
            Self::Ec(_) => Alg::Es256,
            Self::Rsa(_) => Alg::Rs256,
        };
        let input = jwt::signing_input(alg, client_id, audience, now, &URL_SAFE_NO_PAD.encode(id));
        let signature = match self {
            Self::Ec(key) => key
                .sign(&rng, input.as_bytes())
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| AuthFailure::host("the assertion could not be signed"))?,
            Self::Rsa(key) => {
                let mut out = vec![0; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| AuthFailure::host("the assertion could not be signed"))?;
                out
            }
        };
        let assertion = jwt::assertion(&input, &signature);
        // Known before it is sent: a token endpoint or server that echoes it shows nothing.
        brain_mcp_proto::text::learn_jwt(&assertion);
        Ok(assertion)
    }
}

/// `n` random bytes, base64url: PKCE verifiers and `state` values.
pub(crate) fn random_token(n: usize) -> Result<String, AuthFailure> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| AuthFailure::host("no randomness available"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The PKCE S256 challenge of `verifier` (RFC 7636 §4.2).
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        verifier.as_bytes(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 PKCS #8 key made for this test.
    fn ec_pem() -> String {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(doc.as_ref());
        format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n")
    }

    #[test]
    fn an_ec_assertion_verifies_with_its_public_key() {
        let pem = ec_pem();
        let Signer::Ec(key) = Signer::from_pem(pem.as_bytes()).unwrap() else {
            panic!("not EC")
        };
        let public = signature::KeyPair::public_key(&key).as_ref().to_vec();
        let signer = Signer::Ec(key);
        let jwt = signer
            .assertion("brain-host", "https://auth.example.com")
            .unwrap();
        let (input, sig) = jwt.rsplit_once('.').unwrap();
        let sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &sig)
            .expect("the signature verifies");
        let claims = input.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://auth.example.com");
        assert_eq!(claims["iss"], "brain-host");
    }

    #[test]
    fn a_signed_assertion_and_its_key_are_known_before_they_leave() {
        let pem = ec_pem();
        let who = Credentials {
            client_id: "brain-host-assert".into(),
            proof: Some(ClientProof::PrivateKeyPem(Secret::new(pem.clone()))),
            method: None,
            issued: false,
            enterprise: None,
        };
        let server: ServerMetadata = serde_json::from_str(
            r#"{"issuer":"https://as.example","token_endpoint":"https://as.example/t",
                "token_endpoint_auth_methods_supported":["private_key_jwt"]}"#,
        )
        .unwrap();
        let mut form = Form::default();
        let (_, secrets) = who.apply(&mut form, &server, "https://as.example").unwrap();
        let sent = form.body().to_owned();
        let assertion = sent
            .split('&')
            .find_map(|p| p.strip_prefix("client_assertion="))
            .expect("an assertion was sent");
        // Shown through any `Secrets`, even one that never heard of it: nothing of it.
        let echoed = format!("bad assertion {assertion} and key {pem}");
        let shown = Secrets::none().shown(&echoed, 100_000);
        assert!(!shown.contains(&assertion[..20]), "{shown}");
        let body = pem.lines().nth(1).unwrap();
        assert!(!shown.contains(&body[..20]), "{shown}");
        assert!(secrets.redact(assertion).contains("[redacted]"));
        assert!(!format!("{who:?}").contains(&body[..20]));
    }

    #[test]
    fn every_basic_form_of_a_client_secret_is_known_before_it_leaves() {
        let who = Credentials {
            client_id: "brain-host-basic".into(),
            proof: Some(ClientProof::Secret(Secret::new("sEcret/for+BASIC-test"))),
            method: Some(ClientAuth::Basic),
            issued: false,
            enterprise: None,
        };
        let server: ServerMetadata = serde_json::from_str(
            r#"{"issuer":"https://as.example","token_endpoint":"https://as.example/t"}"#,
        )
        .unwrap();
        let (basic, _) = who
            .apply(&mut Form::default(), &server, "https://as.example")
            .unwrap();
        let basic = basic.expect("client_secret_basic");
        let b64 = basic.trim_start_matches("Basic ");
        let pair = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap();
        for echoed in [
            basic.as_str(),
            b64,
            pair.as_str(),
            "brain-host-basic:sEcret/for+BASIC-test",
        ] {
            let shown = Secrets::none().shown(echoed, 1000);
            assert!(
                !shown.contains("sEcret") && !shown.contains(&b64[..12]),
                "{echoed} shown as {shown}"
            );
        }
        assert!(!format!("{who:?}").contains("sEcret"));
    }

    #[test]
    fn unusable_keys_are_refused_without_their_text() {
        for pem in [
            "",
            "not pem",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ] {
            let why = Signer::from_pem(pem.as_bytes()).err().expect("refused");
            assert!(!why.contains("AAAA"), "{why}");
        }
    }

    #[test]
    fn pkce_is_base64url_sha256() {
        // Computed independently (Python's hashlib and base64).
        assert_eq!(
            pkce_challenge("brain-pkce-test-verifier-0123456789-abcdefghij"),
            "ITot03ckFLetpgafX8iK1x8WosNKIUhX7Prqd4-9i1I"
        );
        assert_eq!(random_token(32).unwrap().len(), 43);
        assert_ne!(random_token(32).unwrap(), random_token(32).unwrap());
    }
}
