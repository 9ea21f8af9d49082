//! Where a client looks for the metadata that tells it how to get a token, in the order
//! the MCP authorization spec gives, and the checks a document must pass before it is
//! believed.

use super::AuthError;
use super::challenge::BearerChallenge;
use super::url::{HttpUrl, check_endpoint};
use crate::text::cut;

/// The most bytes of a URL a server wrote that a refusal repeats.
const SHOWN: usize = 256;

/// RFC 9728's well-known name.
const PROTECTED_RESOURCE: &str = "oauth-protected-resource";
/// RFC 8414's well-known name.
const AUTHORIZATION_SERVER: &str = "oauth-authorization-server";
/// OpenID Connect Discovery's well-known name.
const OPENID: &str = "openid-configuration";

/// Where to fetch the protected resource metadata of `server`, in order: the challenge's
/// `resource_metadata` when it passes [`check_endpoint`], then the well-known URL with the
/// server's path inserted (when it has one), then the root well-known URL.
pub fn protected_resource_urls(
    server: &HttpUrl,
    challenge: Option<&BearerChallenge>,
) -> Vec<String> {
    let mut urls = Vec::with_capacity(3);
    if let Some(url) = challenge.and_then(|c| c.resource_metadata.as_deref())
        && check_endpoint(url, server).is_ok()
    {
        urls.push(url.to_owned());
    }
    if !server.path().is_empty() {
        urls.push(server.well_known_inserted(PROTECTED_RESOURCE));
    }
    urls.push(server.well_known_root(PROTECTED_RESOURCE));
    urls.dedup();
    urls
}

/// Checks the `resource` of protected resource metadata against the server it was
/// fetched for: the same URL, or one the server's URL lies under (a resource that
/// covers the whole origin, say). Anything else is refused: a token for another resource
/// must never be asked for on this server's behalf.
pub fn check_resource(resource: &str, server: &HttpUrl) -> Result<(), AuthError> {
    match HttpUrl::parse(resource) {
        // RFC 8707 §2: a resource indicator has no fragment.
        Ok(named) if server.is_within(&named) && !resource.contains('#') => Ok(()),
        _ => Err(AuthError::ResourceMismatch {
            resource: cut(resource, SHOWN).into_owned(),
            server: server.canonical(),
        }),
    }
}

/// Where to fetch the metadata of the authorization server `issuer`, in order (RFC 8414
/// §3.1 and OpenID Connect Discovery, as the MCP spec orders them). For an issuer with a
/// path the root documents are never asked: they describe another issuer.
pub fn authorization_server_urls(issuer: &HttpUrl) -> Vec<String> {
    if issuer.path().is_empty() {
        vec![
            issuer.well_known_root(AUTHORIZATION_SERVER),
            issuer.well_known_root(OPENID),
        ]
    } else {
        vec![
            issuer.well_known_inserted(AUTHORIZATION_SERVER),
            issuer.well_known_inserted(OPENID),
            issuer.well_known_appended(OPENID),
        ]
    }
}

/// Checks the `issuer` a metadata document names against the issuer its URL was built
/// from: RFC 8414 §3.3 asks for the identical string; a document for another issuer is
/// refused (it could send the client's secret elsewhere).
pub fn check_issuer(named: &str, expected: &str) -> Result<(), AuthError> {
    if named == expected {
        Ok(())
    } else {
        Err(AuthError::IssuerMismatch {
            named: cut(named, SHOWN).into_owned(),
            expected: expected.to_owned(),
        })
    }
}

/// The 2025-03-26 revision had no protected resource metadata: the authorization server
/// is the MCP server's origin, its metadata at the root well-known URL, and without
/// metadata its endpoints are these defaults.
pub mod legacy {
    use super::{AUTHORIZATION_SERVER, HttpUrl};

    /// The metadata URL of the server's own authorization server (the path is dropped).
    pub fn metadata_url(server: &HttpUrl) -> String {
        server.well_known_root(AUTHORIZATION_SERVER)
    }

    /// The default endpoints when there is no metadata: `(authorize, token, register)`.
    pub fn default_endpoints(server: &HttpUrl) -> (String, String, String) {
        let origin = server.origin();
        (
            format!("{origin}/authorize"),
            format!("{origin}/token"),
            format!("{origin}/register"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> HttpUrl {
        HttpUrl::parse(s).unwrap()
    }

    #[test]
    fn protected_resource_order() {
        let server = url("https://mcp.example.com/public/mcp");
        let challenge = BearerChallenge {
            resource_metadata: Some("https://mcp.example.com/prm".into()),
            ..Default::default()
        };
        assert_eq!(
            protected_resource_urls(&server, Some(&challenge)),
            [
                "https://mcp.example.com/prm",
                "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        // No challenge, a server at the root: only the root form.
        assert_eq!(
            protected_resource_urls(&url("https://mcp.example.com/"), None),
            ["https://mcp.example.com/.well-known/oauth-protected-resource"]
        );
        // A challenge URL that is not http(s), or plain http to another host, is skipped.
        for odd in ["file:///etc/passwd", "http://evil.example/prm"] {
            let odd = BearerChallenge {
                resource_metadata: Some(odd.into()),
                ..Default::default()
            };
            assert_eq!(protected_resource_urls(&server, Some(&odd)).len(), 2);
        }
    }

    #[test]
    fn authorization_server_order() {
        assert_eq!(
            authorization_server_urls(&url("https://auth.example.com/tenant1")),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_urls(&url("https://auth.example.com")),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_must_cover_the_server() {
        let server = url("https://mcp.example.com/mcp");
        assert!(check_resource("https://mcp.example.com/mcp", &server).is_ok());
        assert!(check_resource("https://MCP.example.com:443/mcp/", &server).is_ok());
        assert!(check_resource("https://mcp.example.com", &server).is_ok());
        for other in [
            "https://evil.example.com/mcp",
            "https://mcp.example.com/other",
            "https://mcp.example.com/mcp/deeper",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com/mcp#frag",
            "not a url",
        ] {
            assert!(
                matches!(
                    check_resource(other, &server),
                    Err(AuthError::ResourceMismatch { .. })
                ),
                "{other}"
            );
        }
    }

    #[test]
    fn issuer_is_compared_exactly() {
        assert!(check_issuer("https://a.example/t1", "https://a.example/t1").is_ok());
        assert!(check_issuer("https://a.example/t1/", "https://a.example/t1").is_err());
        assert!(check_issuer("https://evil.example", "https://a.example").is_err());
    }

    #[test]
    fn legacy_fallbacks() {
        let server = url("https://mcp.example.com/v1/mcp");
        assert_eq!(
            legacy::metadata_url(&server),
            "https://mcp.example.com/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            legacy::default_endpoints(&server).1,
            "https://mcp.example.com/token"
        );
    }
}
