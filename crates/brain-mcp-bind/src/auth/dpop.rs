//! A client's DPoP key (RFC 9449): one P-256 key per authorizer, made in memory when
//! first needed and never written anywhere, and the nonces the servers asked for. The
//! core says what a proof holds; this signs it.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use brain_mcp_proto::auth::dpop::{self, Claims, PublicJwk};
use brain_mcp_proto::client::Header;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair as _};

use super::failure::AuthFailure;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The key that proves possession of DPoP-bound tokens, and the nonces servers gave.
/// Its `Debug` shows nothing of the key.
pub(crate) struct DpopKey {
    key: EcdsaKeyPair,
    jwk: PublicJwk,
    rng: SystemRandom,
    /// The nonce the authorization server asked for (RFC 9449 §8).
    token_nonce: Mutex<Option<String>>,
    /// The nonce the MCP server asked for (RFC 9449 §9).
    resource_nonce: Mutex<Option<String>>,
    /// The newest proofs made, secrets of whatever the servers answer to them.
    recent: Mutex<VecDeque<String>>,
}

/// Proofs a key remembers for redaction: enough for the calls in flight on one server
/// to find their own, bounded whatever the traffic.
const RECENT_PROOFS: usize = 32;

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(***)")
    }
}

impl DpopKey {
    /// A new P-256 key, kept in memory only (its PKCS #8 form is dropped at once).
    pub(crate) fn generate() -> Result<Self, AuthFailure> {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng)
            .map_err(|_| AuthFailure::host("authorization: no DPoP key could be made"))?;
        let key = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng)
            .map_err(|_| AuthFailure::host("authorization: no DPoP key could be made"))?;
        let jwk = PublicJwk::p256(key.public_key().as_ref())
            .ok_or_else(|| AuthFailure::host("authorization: the DPoP key is not P-256"))?;
        Ok(Self {
            key,
            jwk,
            rng,
            token_nonce: Mutex::new(None),
            resource_nonce: Mutex::new(None),
            recent: Mutex::new(VecDeque::new()),
        })
    }

    /// A proof for a `htm` request to `url`, with the access token's hash when it carries
    /// `token`; the caller adds it to the request's secrets.
    fn proof(
        &self,
        htm: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthFailure> {
        let mut id = [0u8; 16];
        self.rng
            .fill(&mut id)
            .map_err(|_| AuthFailure::host("authorization: no randomness for a DPoP proof"))?;
        let jti = URL_SAFE_NO_PAD.encode(id);
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let digest = token.map(|t| ring::digest::digest(&ring::digest::SHA256, t.as_bytes()));
        let claims = Claims::new(htm, url, iat, &jti)
            .with_token_digest(digest.as_ref().map(AsRef::as_ref))
            .with_nonce(nonce);
        let input = dpop::signing_input(&self.jwk, &claims);
        let signature = self
            .key
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| AuthFailure::host("authorization: the DPoP proof could not be signed"))?;
        // Not registered with the process's redaction step (one registration per request
        // would rebuild the shared matcher at every call): each request's own secrets
        // hold it (`link/http.rs`, `flow.rs`), and the key remembers the newest for what
        // a server says later (`Authorizer::secrets`).
        let proof = dpop::proof(&input, signature.as_ref());
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT_PROOFS {
            recent.pop_front();
        }
        recent.push_back(proof.clone());
        Ok(proof)
    }

    /// The newest proofs this key made.
    pub(crate) fn recent(&self) -> Vec<String> {
        lock(&self.recent).iter().cloned().collect()
    }

    /// The `DPoP` header of a token request to `endpoint`, with the authorization
    /// server's nonce if it gave one.
    pub(crate) fn token_request_header(&self, endpoint: &str) -> Result<Header, AuthFailure> {
        let nonce = lock(&self.token_nonce).clone();
        let proof = self.proof("POST", endpoint, None, nonce.as_deref())?;
        Ok(Header::sensitive(brain_mcp_transport::DPOP, proof))
    }

    /// The `DPoP` header of a `htm` request to the MCP server at `url` carrying `token`,
    /// with the server's nonce if it gave one; the proof's text too, a secret of the
    /// request.
    pub(crate) fn resource_header(
        &self,
        htm: &str,
        url: &str,
        token: &str,
    ) -> Result<(Header, String), AuthFailure> {
        let nonce = lock(&self.resource_nonce).clone();
        let proof = self.proof(htm, url, Some(token), nonce.as_deref())?;
        Ok((
            Header::sensitive(brain_mcp_transport::DPOP, proof.clone()),
            proof,
        ))
    }

    /// Keeps the nonce the authorization server asked for.
    pub(crate) fn token_nonce(&self, nonce: &str) {
        *lock(&self.token_nonce) = Some(nonce.to_owned());
    }

    /// Keeps the nonce the MCP server asked for.
    pub(crate) fn resource_nonce(&self, nonce: &str) {
        *lock(&self.resource_nonce) = Some(nonce.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_with_the_key_in_its_header_and_never_shows_it() {
        let key = DpopKey::generate().unwrap();
        key.resource_nonce("n-42");
        let (header, proof) = key
            .resource_header("POST", "https://mcp.example/mcp?q=1", "at-0123456789abcdef")
            .unwrap();
        assert_eq!(header.value.as_ref(), proof.as_str());
        let (input, sig) = proof.rsplit_once('.').unwrap();
        let public = key.key.public_key().as_ref().to_vec();
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
            .expect("the proof verifies");
        let claims: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(input.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n-42");
        let expected = URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            b"at-0123456789abcdef",
        ));
        assert_eq!(claims["ath"], expected);
        // Two proofs never share a jti.
        let (_, again) = key
            .resource_header("POST", "https://mcp.example/mcp", "at-0123456789abcdef")
            .unwrap();
        assert_ne!(proof, again);
        assert_eq!(format!("{key:?}"), "DpopKey(***)");
        // Remembered by the key, so what a server says later is redacted of it.
        assert!(key.recent().contains(&proof));
        let shown = brain_mcp_proto::text::Secrets::new(key.recent()).shown(&proof, 10_000);
        assert!(!shown.contains(sig), "{shown}");
        // And bounded, whatever the traffic.
        for _ in 0..2 * RECENT_PROOFS {
            key.resource_header("GET", "https://mcp.example/mcp", "at-1")
                .unwrap();
        }
        assert_eq!(key.recent().len(), RECENT_PROOFS);
    }
}
