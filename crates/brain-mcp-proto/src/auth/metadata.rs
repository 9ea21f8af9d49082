//! The two documents a client reads before asking for a token: the MCP server's protected
//! resource metadata (RFC 9728) and its authorization server's metadata (RFC 8414, or
//! OpenID Connect Discovery). Only the fields a client acts on are kept; unknown fields
//! are ignored, and a field of the wrong type makes the document unusable.

use serde::Deserialize;

use super::AuthError;

/// What a protected resource says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource's identifier: a URL the server lies at or under.
    pub resource: String,
    /// The issuers of the authorization servers that grant tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes it knows, if it lists them.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// What an authorization server says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// The issuer identifier, compared exactly with the one the document was asked for.
    pub issuer: String,
    /// Where a user is sent to approve (authorization code grant).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where tokens are asked for.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591), if offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// How a client may authenticate at the token endpoint; absent means
    /// `client_secret_basic` (RFC 8414 §2).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods; MCP requires `S256` to be listed.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Scopes the server knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types the server accepts.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// Whether a Client ID Metadata Document URL is accepted as `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the authorization response carries `iss`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

impl ResourceMetadata {
    /// Reads the document from a response body.
    pub fn parse(body: &[u8]) -> Result<Self, AuthError> {
        serde_json::from_slice(body).map_err(|e| AuthError::Document {
            what: "protected resource metadata",
            why: e.classify_name(),
        })
    }
}

impl ServerMetadata {
    /// Reads the document from a response body.
    pub fn parse(body: &[u8]) -> Result<Self, AuthError> {
        serde_json::from_slice(body).map_err(|e| AuthError::Document {
            what: "authorization server metadata",
            why: e.classify_name(),
        })
    }

    /// Whether the server lists `method` among its token endpoint client authentication
    /// methods (an absent list means only `client_secret_basic`).
    pub fn accepts_auth(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// A short, content-free name for why JSON could not be read: a server's text never
/// reaches a message through here.
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "it could not be read",
            serde_json::error::Category::Syntax => "it is not JSON",
            serde_json::error::Category::Data => "a field is missing or of the wrong type",
            serde_json::error::Category::Eof => "it ends early",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_keeps_what_a_client_reads() {
        let doc = br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["a","b"],"bearer_methods_supported":["header"]}"#;
        let m = ResourceMetadata::parse(doc).unwrap();
        assert_eq!(m.resource, "https://mcp.example.com/mcp");
        assert_eq!(m.authorization_servers, ["https://auth.example.com"]);
        assert_eq!(
            m.scopes_supported.as_deref(),
            Some(&["a".into(), "b".into()][..])
        );
    }

    #[test]
    fn bad_documents_are_refused_without_their_text() {
        for doc in [
            &b"not json at all: secret-ish text"[..],
            br#"{"authorization_servers":[]}"#,
            br#"{"resource":7}"#,
            br#"{"resource":"x""#,
        ] {
            let err = ResourceMetadata::parse(doc).unwrap_err();
            assert!(matches!(err, AuthError::Document { .. }), "{err:?}");
            assert!(!err.to_string().contains("secret"));
        }
        assert!(ServerMetadata::parse(br#"{"token_endpoint":"https://a/t"}"#).is_err());
    }

    #[test]
    fn auth_methods_default_to_basic() {
        let m = ServerMetadata::parse(br#"{"issuer":"https://a"}"#).unwrap();
        assert!(m.accepts_auth("client_secret_basic"));
        assert!(!m.accepts_auth("client_secret_post"));
        let m = ServerMetadata::parse(
            br#"{"issuer":"https://a","token_endpoint_auth_methods_supported":["private_key_jwt"]}"#,
        )
        .unwrap();
        assert!(m.accepts_auth("private_key_jwt"));
        assert!(!m.accepts_auth("client_secret_basic"));
    }
}
