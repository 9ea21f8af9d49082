//! The canonical views authorization compares URLs by, built on the shared
//! [`crate::url::Url`]: a URL is read by its lenient rule (a query and fragment are
//! allowed and dropped, since no metadata URL keeps them), then reduced to scheme,
//! authority and path, with the well-known URLs built from them.

use core::fmt;

use super::reach::{AddrClass, host_class};
use crate::url::{self, Url};

/// An absolute `http` or `https` URL as authorization compares it: scheme, authority and
/// path, canonical. `Debug` shows the origin only.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https` (else `http`).
    https: bool,
    /// Host, lower case (an IPv6 literal in brackets), and the port unless the scheme's.
    authority: String,
    /// The path, without a trailing `/` (empty for the root).
    path: String,
}

/// Why a URL is not usable for authorization.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `http://` or `https://` followed by a host (and a valid port, if any).
    #[error("is not an absolute http or https URL")]
    NotHttp,
    /// User information (`user:password@`) is never accepted in these URLs.
    #[error("carries user information")]
    UserInfo,
    /// Whitespace, control characters, quotes, angle brackets, backslashes or a fragment.
    #[error("holds characters a URL for authorization may not")]
    Unsafe,
    /// Plain `http` to a host that is not the server's own origin, nor loopback for a
    /// server on loopback.
    #[error("is not https")]
    Insecure,
}

impl From<url::UrlError> for UrlError {
    fn from(e: url::UrlError) -> Self {
        match e {
            url::UrlError::Credentials => Self::UserInfo,
            _ => Self::NotHttp,
        }
    }
}

impl HttpUrl {
    /// Reads `url` by the shared lenient rule; a query and fragment are dropped (no
    /// metadata URL keeps them).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        Ok(Self::from_url(&Url::parse_lenient(url)?))
    }

    /// The canonical view of a URL read by either rule.
    pub fn from_url(url: &Url) -> Self {
        let host = url.host();
        let mut authority = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        if !url.is_default_port() {
            authority.push(':');
            authority.push_str(itoa::Buffer::new().format(url.port()));
        }
        Self {
            https: url.is_https(),
            authority,
            path: url.path().trim_end_matches('/').to_owned(),
        }
    }

    fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme(), self.authority)
    }
    /// The path without a trailing `/`; empty for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URL in the form compared for equality: scheme and host in lower case, no
    /// default port, no trailing `/`, no query or fragment.
    pub fn canonical(&self) -> String {
        format!("{}{}", self.origin(), self.path)
    }

    /// `origin/.well-known/<name><path>`: the RFC 8615 URL with this URL's path inserted
    /// after the well-known name (RFC 8414 §3.1, RFC 9728 §3.1).
    pub fn well_known_inserted(&self, name: &str) -> String {
        format!("{}/.well-known/{name}{}", self.origin(), self.path)
    }

    /// `origin/.well-known/<name>`, the root form.
    pub fn well_known_root(&self, name: &str) -> String {
        format!("{}/.well-known/{name}", self.origin())
    }

    /// `origin<path>/.well-known/<name>`: the well-known name appended to the path
    /// (OpenID Connect Discovery 1.0 §4).
    pub fn well_known_appended(&self, name: &str) -> String {
        format!("{}{}/.well-known/{name}", self.origin(), self.path)
    }

    /// Whether `self` is `other` or lies under it: the same origin, and `other`'s path
    /// a prefix of ours ending at a segment boundary.
    pub fn is_within(&self, other: &Self) -> bool {
        self.https == other.https
            && self.authority == other.authority
            && (self.path == other.path
                || other.path.is_empty()
                || self
                    .path
                    .strip_prefix(&other.path)
                    .is_some_and(|rest| rest.starts_with('/')))
    }
}

/// Whether an authorization URL a peer named may be used for a server at `server`: an
/// absolute URL without whitespace, control characters, quotes, angle brackets,
/// backslashes or a fragment, over `https`, or over `http` only to the server's own
/// origin (an `http` server configured so by its operator) or, for a server on loopback,
/// to a loopback host. A URL that fails is never fetched, posted to, or shown to a user.
///
/// This is the text rule; where the URL may connect to, once its name is resolved, is
/// [`super::reach::Destinations`]'s.
pub fn check_endpoint(url: &str, server: &HttpUrl) -> Result<HttpUrl, UrlError> {
    if url.chars().any(|c| {
        c.is_whitespace() || c.is_control() || matches!(c, '"' | '<' | '>' | '\\' | '`' | '#')
    }) {
        return Err(UrlError::Unsafe);
    }
    let parsed = HttpUrl::parse(url)?;
    let local = parsed.is_loopback() && server.is_loopback();
    if parsed.https || local || parsed.origin() == server.origin() {
        Ok(parsed)
    } else {
        Err(UrlError::Insecure)
    }
}

/// Whether two issuer identifiers name the same server, ignoring a trailing `/`, a default
/// port and the case of scheme and host (a configured issuer is typed by a person). Only
/// for matching a configured issuer; a document's `issuer` is compared exactly.
pub fn same_issuer(a: &str, b: &str) -> bool {
    matches!((HttpUrl::parse(a), HttpUrl::parse(b)), (Ok(a), Ok(b)) if a == b)
}

impl fmt::Debug for HttpUrl {
    /// Shows the origin only: the path may hold keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HttpUrl").field(&self.origin()).finish()
    }
}

impl HttpUrl {
    /// The host, lower case, without port (an IPv6 literal keeps its brackets).
    pub fn host(&self) -> &str {
        match self.authority.strip_prefix('[') {
            Some(v6) => v6
                .find(']')
                .and_then(|end| self.authority.get(..end + 2))
                .unwrap_or(&self.authority),
            None => self.authority.split(':').next().unwrap_or_default(),
        }
    }

    /// Whether the host is `localhost`, a `*.localhost` name, or a loopback address
    /// (`127.0.0.0/8`, `[::1]`, `[::ffff:127.x.x.x]`).
    pub fn is_loopback(&self) -> bool {
        host_class(self.host()) == Some(AddrClass::Loopback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_a_peer_names() {
        let server = HttpUrl::parse("https://mcp.example.com/mcp").unwrap();
        assert!(check_endpoint("https://auth.example.com/token", &server).is_ok());
        // Plain http to loopback, named for a server that is not on loopback: refused.
        for local in [
            "http://127.0.0.1:8080/token",
            "http://localhost:3000/authorize",
            "http://[::1]:3000/authorize",
            "http://evil.localhost/x?y=1",
        ] {
            assert_eq!(
                check_endpoint(local, &server).unwrap_err(),
                UrlError::Insecure,
                "{local}"
            );
        }
        // ... and allowed for a server that is on loopback itself.
        for on_loopback in [
            "http://127.0.0.1:9/mcp",
            "http://localhost:9/mcp",
            "http://[::1]:9/mcp",
        ] {
            let local = HttpUrl::parse(on_loopback).unwrap();
            assert!(check_endpoint("http://127.0.0.1:8080/token", &local).is_ok());
            assert!(check_endpoint("http://localhost:3000/authorize", &local).is_ok());
            assert!(check_endpoint("http://[::1]:3000/authorize", &local).is_ok());
            assert!(check_endpoint("http://auth.example.com/token", &local).is_err());
        }
        assert_eq!(
            check_endpoint("http://auth.example.com/token", &server).unwrap_err(),
            UrlError::Insecure
        );
        assert_eq!(
            check_endpoint("http://127.0.0.1.evil.com/x", &server).unwrap_err(),
            UrlError::Insecure
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "ms-msdt:x",
            "https://a.example/x y",
            "https://a.example/x#frag",
            "https://a.example/\"x",
        ] {
            assert!(check_endpoint(bad, &server).is_err(), "{bad}");
        }
        // An http server's own origin, as its operator configured it.
        let plain = HttpUrl::parse("http://mcp.internal/mcp").unwrap();
        assert!(check_endpoint("http://mcp.internal/token", &plain).is_ok());
        assert!(check_endpoint("http://other.internal/token", &plain).is_err());
    }

    #[test]
    fn hosts_and_loopback() {
        let p = |s| HttpUrl::parse(s).unwrap();
        assert_eq!(p("http://[::1]:8/x").host(), "[::1]");
        assert_eq!(p("http://h:8/x").host(), "h");
        assert!(p("http://127.1.2.3/").is_loopback());
        assert!(p("http://[::ffff:127.0.0.1]/").is_loopback());
        assert!(p("http://a.localhost:1/").is_loopback());
        assert!(!p("http://127.0.0.1.evil.com/").is_loopback());
        assert!(!p("http://10.0.0.1/").is_loopback());
    }

    #[test]
    fn canonical_forms() {
        let u = HttpUrl::parse("HTTPS://MCP.Example.com:443/Public/MCP/?x=1#f").unwrap();
        assert_eq!(u.canonical(), "https://mcp.example.com/Public/MCP");
        assert_eq!(
            HttpUrl::parse("http://h:8080").unwrap().canonical(),
            "http://h:8080"
        );
        assert_eq!(HttpUrl::parse("ftp://h/x"), Err(UrlError::NotHttp));
        assert_eq!(HttpUrl::parse("https:///x"), Err(UrlError::NotHttp));
        assert_eq!(HttpUrl::parse("https://u:p@h/"), Err(UrlError::UserInfo));
    }

    #[test]
    fn well_known_forms() {
        let u = HttpUrl::parse("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            u.well_known_inserted("oauth-authorization-server"),
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            u.well_known_appended("openid-configuration"),
            "https://auth.example.com/tenant1/.well-known/openid-configuration"
        );
        assert_eq!(
            u.well_known_root("oauth-protected-resource"),
            "https://auth.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn within() {
        let p = |s| HttpUrl::parse(s).unwrap();
        assert!(p("https://h/mcp").is_within(&p("https://h/")));
        assert!(p("https://h/a/mcp").is_within(&p("https://h/a")));
        assert!(p("https://h/a").is_within(&p("https://h/a/")));
        assert!(!p("https://h/ab").is_within(&p("https://h/a")));
        assert!(!p("https://h/a").is_within(&p("https://h/a/mcp")));
        assert!(!p("https://h:8443/a").is_within(&p("https://h/a")));
        assert!(!p("http://h/a").is_within(&p("https://h/a")));
    }
    /// The split this type did before it was built on the shared URL type, kept to show
    /// the shared rule yields the same canonical forms: `(origin, path)`.
    fn former_split(url: &str) -> Option<(String, String)> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => ":443",
            "http" => ":80",
            _ => return None,
        };
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let mut authority = authority.to_ascii_lowercase();
        if authority.ends_with(default_port) {
            authority.truncate(authority.len() - default_port.len());
        }
        Some((
            format!("{scheme}://{authority}"),
            path.trim_end_matches('/').to_owned(),
        ))
    }

    #[test]
    fn the_shared_type_gives_the_forms_computed_before() {
        for url in [
            "https://example.com/mcp",
            "HTTPS://MCP.Example.com:443/Public/MCP/?x=1",
            "http://127.0.0.1:8080/mcp/",
            "http://[::1]:3000/mcp?x=1",
            "http://[::1]:80/",
            "http://h:443/a//",
            "https://h:80",
            "http://mcp_server.internal:80/a/b?k=v&x=%2F",
            "https://h/p?q=a:b@c/d?e",
            "https://xn--bcher-kva.example/mcp",
        ] {
            let endpoint = Url::parse(url).unwrap();
            let (origin, path) = former_split(url).unwrap();
            for parsed in [HttpUrl::from_url(&endpoint), HttpUrl::parse(url).unwrap()] {
                assert_eq!(parsed.origin(), origin, "{url}");
                assert_eq!(parsed.path(), path, "{url}");
                assert_eq!(parsed.canonical(), format!("{origin}{path}"), "{url}");
            }
        }
    }

    #[test]
    fn debug_shows_the_origin_only() {
        let u = HttpUrl::parse("https://h.example/t/s3cret?k=1").unwrap();
        assert_eq!(format!("{u:?}"), "HttpUrl(\"https://h.example\")");
    }

    #[test]
    fn peer_urls_are_still_read_leniently() {
        // The lenient rule: characters the endpoint rule refuses are the use's to judge.
        let u = HttpUrl::parse("https://Auth.example/a b/#frag").unwrap();
        assert_eq!(u.canonical(), "https://auth.example/a b");
        // A port must be a port now (it was taken as text).
        assert_eq!(HttpUrl::parse("https://h:x/"), Err(UrlError::NotHttp));
    }
}
