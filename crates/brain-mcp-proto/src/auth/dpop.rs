//! DPoP (RFC 9449; MCP's SEP-1932): what a proof says, when a server wants one, and what
//! its nonce demands mean. A proof is a JWT the client signs with a key of its own for
//! each request (method, URL without query or fragment, time, a unique id, the access
//! token's hash for a resource request, the server's nonce when it gave one); the driver
//! holds the key and signs what is built here.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::challenge::{self, BearerChallenge};

/// The proof's JWS `typ` (RFC 9449 §4.2).
pub const TYP: &str = "dpop+jwt";
/// The one signature algorithm Brain's proofs use: ECDSA with P-256 and SHA-256.
pub const ALG: &str = "ES256";
/// The `error` a server answers with when the proof lacks the nonce it wants
/// (RFC 9449 §8 for an authorization server, §9 for a resource server).
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";
/// The `token_type` of a DPoP-bound access token (RFC 9449 §5).
pub const TOKEN_TYPE: &str = "DPoP";
/// The longest nonce taken from a server; a longer one is not used.
pub const MAX_NONCE_BYTES: usize = 512;
/// How many times one request is sent again with a nonce a server asked for. A server
/// that asks again after that is refusing, not asking.
pub const MAX_NONCE_ROUNDS: u32 = 2;

/// The public half of a P-256 key as a JWK (RFC 7517, RFC 7518 §6.2.1): the proof's
/// header carries it so the server can check the signature and bind the token to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicJwk {
    x: String,
    y: String,
}

impl PublicJwk {
    /// The JWK of an uncompressed P-256 point (`0x04 || x || y`, 65 bytes), as a signer
    /// reports its public key; `None` for anything else.
    pub fn p256(point: &[u8]) -> Option<Self> {
        match point {
            [0x04, rest @ ..] if rest.len() == 64 => Some(Self {
                x: URL_SAFE_NO_PAD.encode(&rest[..32]),
                y: URL_SAFE_NO_PAD.encode(&rest[32..]),
            }),
            _ => None,
        }
    }

    fn to_value(&self) -> serde_json::Value {
        // The members in the order RFC 7638 hashes them, so a thumbprint of the text is
        // the key's thumbprint.
        serde_json::json!({ "crv": "P-256", "kty": "EC", "x": self.x, "y": self.y })
    }
}

/// What one proof says.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Claims<'a> {
    /// The request's method (`POST`, `DELETE`, `GET`).
    pub htm: &'a str,
    /// The request's URL; its query and fragment are left out ([`htu`]).
    pub htu: &'a str,
    /// Seconds since the epoch.
    pub iat: u64,
    /// A value used for no other proof.
    pub jti: &'a str,
    /// The SHA-256 digest of the access token, for a request that carries one.
    pub token_digest: Option<&'a [u8]>,
    /// The nonce the server asked for, if it did.
    pub nonce: Option<&'a str>,
}

impl<'a> Claims<'a> {
    /// A proof for a `htm` request to `htu` at `iat`, unique by `jti`.
    pub fn new(htm: &'a str, htu: &'a str, iat: u64, jti: &'a str) -> Self {
        Self {
            htm,
            htu,
            iat,
            jti,
            token_digest: None,
            nonce: None,
        }
    }

    /// With the SHA-256 `digest` of the access token the request carries (`ath`).
    #[must_use]
    pub fn with_token_digest(mut self, digest: Option<&'a [u8]>) -> Self {
        self.token_digest = digest;
        self
    }

    /// With the `nonce` the server asked for, if any.
    #[must_use]
    pub fn with_nonce(mut self, nonce: Option<&'a str>) -> Self {
        self.nonce = nonce;
        self
    }
}

/// The URL as a proof names it (RFC 9449 §4.2): without query and fragment, and
/// normalized as servers compare it (scheme and host lower case, a default port left
/// out), so a server that compares text exactly accepts what another would normalize.
pub fn htu(url: &str) -> std::borrow::Cow<'_, str> {
    let Ok(parsed) = crate::url::Url::parse_lenient(url) else {
        let end = url.find(['?', '#']).unwrap_or(url.len());
        return std::borrow::Cow::Borrowed(&url[..end]);
    };
    // The origin as authorization compares it; the path as sent.
    let origin = super::HttpUrl::from_url(&parsed).origin();
    std::borrow::Cow::Owned(format!("{origin}{}", parsed.path()))
}

/// The signing input of a proof (`header.claims`, each base64url) for `key`.
pub fn signing_input(key: &PublicJwk, claims: &Claims<'_>) -> String {
    let header = serde_json::json!({ "typ": TYP, "alg": ALG, "jwk": key.to_value() });
    let mut body = serde_json::json!({
        "jti": claims.jti,
        "htm": claims.htm,
        "htu": htu(claims.htu).as_ref(),
        "iat": claims.iat,
    });
    if let Some(digest) = claims.token_digest {
        body["ath"] = serde_json::Value::String(URL_SAFE_NO_PAD.encode(digest));
    }
    if let Some(nonce) = claims.nonce {
        body["nonce"] = serde_json::Value::String(nonce.to_owned());
    }
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(body.to_string())
    )
}

/// The compact proof: the signing input and its signature (ES256: `r || s`, 64 bytes).
pub fn proof(input: &str, signature: &[u8]) -> String {
    super::jwt::assertion(input, signature)
}

/// A nonce a server sent (`DPoP-Nonce`), when it can be used: 1 to
/// [`MAX_NONCE_BYTES`] of RFC 9449's `NQCHAR` (visible ASCII but `"` and `\`).
pub fn nonce(value: &str) -> Option<&str> {
    let value = value.trim();
    (!value.is_empty()
        && value.len() <= MAX_NONCE_BYTES
        && value
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E)))
    .then_some(value)
}

/// Whether a token endpoint's answer asks for the proof again with a nonce
/// (RFC 9449 §8: 400 with `error` `use_dpop_nonce`).
pub fn token_endpoint_wants_nonce(status: u16, body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Refusal<'a> {
        #[serde(borrow)]
        error: std::borrow::Cow<'a, str>,
    }
    status == 400
        && serde_json::from_slice::<Refusal<'_>>(body).is_ok_and(|r| r.error == USE_DPOP_NONCE)
}

/// What a resource server's 401 says about DPoP.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Demand {
    /// Nothing about DPoP: a `Bearer` challenge, or none.
    None,
    /// Tokens must be DPoP-bound: the server challenges with `DPoP` and not `Bearer`.
    Bound,
    /// Send the request again with a proof carrying this nonce (RFC 9449 §9).
    Nonce(String),
}

/// What a 401's `challenge` (its `WWW-Authenticate`) and `nonce` (its `DPoP-Nonce`)
/// demand. A nonce is taken only with a `DPoP` challenge whose `error` is
/// `use_dpop_nonce`, and only when it is usable ([`nonce`]).
pub fn demand(status: u16, challenge: Option<&str>, nonce_header: Option<&str>) -> Demand {
    let Some(value) = challenge.filter(|_| status == 401) else {
        return Demand::None;
    };
    let Some(dpop) = challenge::dpop(value) else {
        return Demand::None;
    };
    if dpop.error.as_deref() == Some(USE_DPOP_NONCE)
        && let Some(n) = nonce_header.and_then(nonce)
    {
        return Demand::Nonce(n.to_owned());
    }
    if challenge::bearer(value).is_none() {
        Demand::Bound
    } else {
        Demand::None
    }
}

/// The challenge a client acts on in a 401 or 403: the `Bearer` one, else the `DPoP`
/// one (its parameters mean the same: `resource_metadata`, `scope`, `error`).
pub fn any_challenge(value: &str) -> Option<BearerChallenge> {
    challenge::bearer(value).or_else(|| challenge::dpop(value))
}

#[cfg(test)]
mod tests {

    #[test]
    fn htu_is_normalized_as_servers_compare_it() {
        assert_eq!(
            htu("https://MCP.Example:443/mcp?k=1#f"),
            "https://mcp.example/mcp"
        );
        assert_eq!(htu("http://h.example:80/a"), "http://h.example/a");
        assert_eq!(htu("https://h.example:8443/a"), "https://h.example:8443/a");
        assert_eq!(htu("https://[::1]:443/m"), "https://[::1]/m");
    }

    use super::*;

    fn decode(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_names_the_request_and_the_key() {
        let mut point = vec![0x04];
        point.extend(1..=64u8);
        let key = PublicJwk::p256(&point).unwrap();
        let digest = [7u8; 32];
        let input = signing_input(
            &key,
            &Claims {
                htm: "POST",
                htu: "https://mcp.example/mcp?x=1#f",
                iat: 1000,
                jti: "j-1",
                token_digest: Some(&digest),
                nonce: Some("n-1"),
            },
        );
        let (header, claims) = input.split_once('.').unwrap();
        let header = decode(header);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert_eq!(
            header["jwk"]["x"],
            URL_SAFE_NO_PAD.encode((1..=32u8).collect::<Vec<_>>())
        );
        assert!(header["jwk"].get("d").is_none(), "never the private key");
        let claims = decode(claims);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["iat"], 1000);
        assert_eq!(claims["jti"], "j-1");
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(digest));
        assert_eq!(claims["nonce"], "n-1");
        // A token request's proof: no ath, no nonce.
        let bare = signing_input(
            &key,
            &Claims {
                htm: "POST",
                htu: "https://as.example/token",
                iat: 1,
                jti: "j-2",
                token_digest: None,
                nonce: None,
            },
        );
        let claims = decode(bare.split('.').nth(1).unwrap());
        assert!(claims.get("ath").is_none() && claims.get("nonce").is_none());
        assert_eq!(proof(&bare, &[1, 2, 3]).split('.').count(), 3);
    }

    #[test]
    fn only_an_uncompressed_p256_point_is_a_key() {
        assert!(PublicJwk::p256(&[0x04; 64]).is_none());
        assert!(PublicJwk::p256(&[0x02; 65]).is_none());
        assert!(PublicJwk::p256(&[]).is_none());
    }

    #[test]
    fn htu_leaves_out_query_and_fragment() {
        assert_eq!(htu("https://a.example/mcp"), "https://a.example/mcp");
        assert_eq!(htu("https://a.example/mcp?k=v"), "https://a.example/mcp");
        assert_eq!(htu("https://a.example/mcp#x?y"), "https://a.example/mcp");
    }

    #[test]
    fn nonces_are_bounded_visible_text() {
        assert_eq!(nonce(" abc-123 "), Some("abc-123"));
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\nb"] {
            assert_eq!(nonce(bad), None, "{bad:?}");
        }
        assert_eq!(nonce(&"n".repeat(MAX_NONCE_BYTES + 1)), None);
    }

    #[test]
    fn what_a_server_demands() {
        assert!(token_endpoint_wants_nonce(
            400,
            br#"{"error":"use_dpop_nonce","error_description":"x"}"#
        ));
        assert!(!token_endpoint_wants_nonce(
            401,
            br#"{"error":"use_dpop_nonce"}"#
        ));
        assert!(!token_endpoint_wants_nonce(
            400,
            br#"{"error":"invalid_grant"}"#
        ));
        assert!(!token_endpoint_wants_nonce(400, b"not json"));
        let nonce_challenge = r#"DPoP error="use_dpop_nonce", resource_metadata="https://m/prm""#;
        assert_eq!(
            demand(401, Some(nonce_challenge), Some("n1")),
            Demand::Nonce("n1".into())
        );
        // Without a usable nonce it is a plain DPoP challenge.
        assert_eq!(
            demand(401, Some(nonce_challenge), Some("a b")),
            Demand::Bound
        );
        assert_eq!(
            demand(401, Some(r#"DPoP resource_metadata="https://m/prm""#), None),
            Demand::Bound
        );
        // A server offering both keeps Bearer usable; a 403 never asks for a nonce.
        assert_eq!(
            demand(401, Some(r#"Bearer realm="m", DPoP algs="ES256""#), None),
            Demand::None
        );
        assert_eq!(demand(403, Some(nonce_challenge), Some("n1")), Demand::None);
        assert_eq!(demand(401, Some("Bearer"), Some("n1")), Demand::None);
        let read = any_challenge(r#"DPoP resource_metadata="https://m/prm""#).unwrap();
        assert_eq!(read.resource_metadata.as_deref(), Some("https://m/prm"));
    }
}
