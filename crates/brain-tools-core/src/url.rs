//! The one rule for an endpoint URL, shared by the config loader, discovery and the call
//! path: what it accepts is exactly what the HTTP layer can send to.
//!
//! The rule and the URL type live in `brain_mcp_proto::url`, shared by every crate of the
//! workspace. [`EndpointUrl`] is that type as this crate's policy holds it: only
//! [`EndpointUrl::parse`], the strict (endpoint) rule, makes one, so holding one proves
//! the rule was applied. The rule: `http` or `https`, a host, an optional port, and a path
//! and query made only of the characters a URL may carry unencoded. Anything a stricter
//! HTTP library would refuse at call time (`"`, `<`, `>`, spaces, non-ASCII) is refused
//! here, at load, with the reason.

use std::fmt;
use std::sync::Arc;

use brain_mcp_proto::url::Url;
pub use brain_mcp_proto::url::{MAX_URL_LEN, UrlError};

/// A URL the endpoint rule accepted. The text is kept as written; [`Self::origin`] is what
/// messages show, and all that `Debug` shows (the path and query may hold keys).
#[derive(Clone, PartialEq, Eq)]
pub struct EndpointUrl(Url);

impl EndpointUrl {
    /// Checks `url` against the endpoint rule. The error is one line saying what is
    /// wrong, without repeating the URL.
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        Url::parse(url).map(Self)
    }

    /// The shared URL type underneath.
    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The host, lower-cased (an IPv6 literal without its brackets), shared.
    pub fn host(&self) -> &Arc<str> {
        self.0.host()
    }

    /// The port: the one given, else 443 for `https` and 80 for `http`.
    pub fn port(&self) -> u16 {
        self.0.port()
    }

    /// The URL as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `scheme://host[:port]`, lower-cased, for messages.
    pub fn origin(&self) -> &str {
        self.0.origin()
    }
}

impl fmt::Debug for EndpointUrl {
    /// Shows the origin only: the path and query may hold keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EndpointUrl").field(&self.origin()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_endpoint_rule_makes_one_and_debug_shows_the_origin() {
        // The lenient rule takes a space in a path; the endpoint rule does not.
        assert!(Url::parse_lenient("https://h.example/a b").is_ok());
        assert!(EndpointUrl::parse("https://h.example/a b").is_err());
        let url = EndpointUrl::parse("https://H.example:8443/mcp?key=k-123").unwrap();
        assert_eq!(url.origin(), "https://h.example:8443");
        assert_eq!(url.port(), 8443);
        assert_eq!(&**url.host(), "h.example");
        let shown = format!("{url:?}");
        assert_eq!(shown, "EndpointUrl(\"https://h.example:8443\")");
        assert!(!shown.contains("k-123"));
    }
}
