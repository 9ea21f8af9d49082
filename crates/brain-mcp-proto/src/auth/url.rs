//! The little URL handling authorization needs, without a URL library: an absolute
//! `http(s)` URL split into origin and path, its canonical form for comparisons, and the
//! well-known URLs built from it.

use super::reach::{AddrClass, host_class};

/// An absolute `http` or `https` URL, split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`, lower case.
    scheme: String,
    /// Host and port as written, host lower case, a default port removed.
    authority: String,
    /// The path, without a trailing `/` (empty for the root).
    path: String,
}

/// Why a URL is not usable for authorization.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `http://` or `https://` followed by a host.
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

impl HttpUrl {
    /// Splits `url`; a query and fragment are dropped (no metadata URL keeps them).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let (scheme, rest) = url.split_once("://").ok_or(UrlError::NotHttp)?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => ":443",
            "http" => ":80",
            _ => return Err(UrlError::NotHttp),
        };
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
        if authority.is_empty() {
            return Err(UrlError::NotHttp);
        }
        if authority.contains('@') {
            return Err(UrlError::UserInfo);
        }
        let mut authority = authority.to_ascii_lowercase();
        if authority.ends_with(default_port) {
            authority.truncate(authority.len() - default_port.len());
        }
        Ok(Self {
            scheme,
            authority,
            path: path.trim_end_matches('/').to_owned(),
        })
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
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
        self.scheme == other.scheme
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
    if parsed.scheme == "https" || local || parsed.origin() == server.origin() {
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

impl HttpUrl {
    /// The host as written, without port (an IPv6 literal keeps its brackets).
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
}
