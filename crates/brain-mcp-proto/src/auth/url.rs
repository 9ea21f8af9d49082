//! The little URL handling authorization needs, without a URL library: an absolute
//! `http(s)` URL split into origin and path, its canonical form for comparisons, and the
//! well-known URLs built from it.

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

#[cfg(test)]
mod tests {
    use super::*;

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
