//! The client assertion of `private_key_jwt` (RFC 7523 §2.2, RFC 7521 §5.2): a JWT the
//! client signs with its key, naming itself as issuer and subject and the authorization
//! server as audience. Built here; signed by the driver, which holds the key.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// How long an assertion is valid, in seconds: long enough for one token request.
pub const ASSERTION_LIFETIME_SECS: u64 = 60;

/// A signature algorithm an assertion can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Alg {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl Alg {
    /// The JWS name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Rs256 => "RS256",
        }
    }
}

/// The signing input of an assertion (`header.claims`, each base64url): for `client_id`
/// at `audience`, issued at `now` (seconds since the epoch), with the unique `jti`.
pub fn signing_input(alg: Alg, client_id: &str, audience: &str, now: u64, jti: &str) -> String {
    let header = serde_json::json!({ "alg": alg.name(), "typ": "JWT" });
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": jti,
    });
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

/// The compact JWT: the signing input and its signature.
pub fn assertion(input: &str, signature: &[u8]) -> String {
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_name_the_client_and_the_audience() {
        let input = signing_input(
            Alg::Es256,
            "brain-host",
            "https://auth.example.com",
            1000,
            "j1",
        );
        let (header, claims) = input.split_once('.').unwrap();
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(claims["iss"], "brain-host");
        assert_eq!(claims["sub"], "brain-host");
        assert_eq!(claims["aud"], "https://auth.example.com");
        assert_eq!(claims["exp"], 1000 + ASSERTION_LIFETIME_SECS);
        assert_eq!(claims["jti"], "j1");
        let jwt = assertion(&input, &[1, 2, 3]);
        assert_eq!(jwt.split('.').count(), 3);
        assert!(jwt.ends_with(".AQID"));
    }
}
