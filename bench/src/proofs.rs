//! `brain-bench proofs --count N`: makes N DPoP proofs the way the binding makes one for
//! a request to the MCP server (16 random bytes for `jti`, the clock for `iat`, the
//! access token's SHA-256 for `ath`, the core's claims and signing input, an ES256
//! signature from `ring`), so that
//! `brain-bench instructions --dpop` can count what one proof costs under callgrind.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use brain_mcp_proto::auth::dpop::{self, Claims, PublicJwk};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair as _};

/// An access token of a typical length.
const TOKEN: &str = "at-4f9c2d7e1b8a6f3c5d0e9b2a7c4f1e8d6b3a0c9f2e5d8b1a4c7f0e3d6b9a2c5f";

/// Runs `--count N` proofs; prints the total length so nothing is optimised away.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut count = 1000usize;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--count" => count = value.parse().map_err(|e| format!("--count: {e}"))?,
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let rng = SystemRandom::new();
    let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).map_err(|e| e.to_string())?;
    let key = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).map_err(|e| e.to_string())?;
    let jwk = PublicJwk::p256(key.public_key().as_ref()).ok_or("not a P-256 key")?;
    let mut total = 0usize;
    for _ in 0..count {
        let mut id = [0u8; 16];
        rng.fill(&mut id).map_err(|e| e.to_string())?;
        let jti = URL_SAFE_NO_PAD.encode(id);
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let digest = ring::digest::digest(&ring::digest::SHA256, TOKEN.as_bytes());
        let claims = Claims::new("POST", "https://mcp.example/mcp", iat, &jti)
            .with_token_digest(Some(digest.as_ref()));
        let input = dpop::signing_input(&jwk, &claims);
        let signature = key
            .sign(&rng, input.as_bytes())
            .map_err(|e| e.to_string())?;
        let proof = dpop::proof(&input, signature.as_ref());
        total += proof.len();
    }
    println!("proofs={count} bytes={total}");
    Ok(())
}
