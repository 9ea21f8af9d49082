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

/// The most bytes of a JWT presented as a grant (a workload's platform token, an ID-JAG).
pub const MAX_GRANT_JWT_BYTES: usize = 16 * 1024;

/// Why a JWT cannot be presented as a grant. Says nothing of the text itself: it is a
/// secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadJwt {
    /// Nothing but whitespace.
    #[error("holds no JWT (it is empty)")]
    Empty,
    /// Longer than [`MAX_GRANT_JWT_BYTES`].
    #[error("holds more than {MAX_GRANT_JWT_BYTES} bytes")]
    TooLong,
    /// Not three base64url segments joined by dots.
    #[error("does not hold a compact JWT (three base64url parts joined by dots)")]
    NotCompact,
}

/// The JWT in `text` as it is sent in a JWT bearer grant (RFC 7523 §2.1): surrounding
/// whitespace dropped (a file a platform writes often ends in a newline), then exactly
/// three non-empty base64url segments (a JWS in compact form), at most
/// [`MAX_GRANT_JWT_BYTES`]. Its claims are the issuer's business: the authorization
/// server checks them.
pub fn grant_jwt(text: &str) -> Result<&str, BadJwt> {
    let jwt = text.trim();
    if jwt.is_empty() {
        return Err(BadJwt::Empty);
    }
    if jwt.len() > MAX_GRANT_JWT_BYTES {
        return Err(BadJwt::TooLong);
    }
    let base64url = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let parts: [Option<&str>; 4] = {
        let mut it = jwt.split('.');
        [it.next(), it.next(), it.next(), it.next()]
    };
    match parts {
        [Some(a), Some(b), Some(c), None] if base64url(a) && base64url(b) && base64url(c) => {
            Ok(jwt)
        }
        _ => Err(BadJwt::NotCompact),
    }
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

    #[test]
    fn a_grant_jwt_is_trimmed_and_must_be_compact() {
        assert_eq!(grant_jwt("aGVhZA.Ym9keQ.c2ln\n"), Ok("aGVhZA.Ym9keQ.c2ln"));
        assert_eq!(grant_jwt(" \n\t"), Err(BadJwt::Empty));
        for bad in [
            "a.b",
            "a.b.c.d",
            "a..c",
            "a.b.c d",
            "a.b.c=",
            "a+b.c.d",
            "ey.\u{e9}.x",
        ] {
            assert_eq!(grant_jwt(bad), Err(BadJwt::NotCompact), "{bad:?}");
        }
        let long = format!("a.{}.c", "b".repeat(MAX_GRANT_JWT_BYTES));
        assert_eq!(grant_jwt(&long), Err(BadJwt::TooLong));
        // The error never repeats the text.
        let secret = "sekrit-part.only";
        let why = grant_jwt(secret).unwrap_err().to_string();
        assert!(!why.contains("sekrit"), "{why}");
    }
}
