//! Where an HTTP server's requests go, with what credentials, and what to keep secret.

use std::sync::Arc;

use brain_mcp_proto::client::Header;
use brain_mcp_transport::{BearerToken, Secrets};
use brain_tools_core::{EndpointUrl, UrlError};
use http::Uri;

use crate::auth::{Authorizer, Authorizers, OAuthClient};

/// The shortest header value of a binding that counts as a secret, in bytes.
pub(crate) const SECRET_HEADER_LEN: usize = 16;

/// Where a request goes: the endpoint, the token for it, and the extra headers every
/// request to it carries. Its `Debug` shows the origin and header names only.
#[derive(Clone)]
pub(crate) struct Target {
    /// The MCP endpoint.
    pub(crate) url: Uri,
    /// The endpoint as configured, the era cache key.
    pub(crate) key: String,
    /// `scheme://host[:port]`, what logs and messages name: never the path or query.
    pub(crate) origin: String,
    /// The host (shared with the binding's URL) and port, for telemetry.
    pub(crate) host: Arc<str>,
    pub(crate) port: u16,
    /// The bearer token, sent only to this endpoint's origin.
    pub(crate) bearer: Option<BearerToken>,
    /// The binding's extra headers (checked by `brain_tools_core::check_headers`), for
    /// every request: POSTs, resuming GETs, DELETEs. Marked sensitive, so hyper and
    /// `Debug` never show a value.
    pub(crate) headers: Vec<Header>,
    /// Every secret of a call to this target (the token, the client's proxy credentials):
    /// removed from everything the server or a proxy says before anyone sees it.
    pub(crate) secrets: Secrets,
    /// OAuth tokens, got when the server asks, in place of a static bearer token.
    pub(crate) auth: Option<Arc<Authorizer>>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("origin", &self.origin)
            .field("bearer", &self.bearer)
            .field("headers", &self.headers)
            .field("secrets", &self.secrets)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// Why a URL cannot be a target. `Display` never repeats the URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TargetError {
    /// The URL breaks the config loader's rule.
    #[error("the URL {0}")]
    Url(UrlError),
    /// The rule took a URL the HTTP layer cannot send to (a bug in the rule, reported
    /// rather than trusted).
    #[error("the URL of {0} cannot be sent to")]
    Unsendable(String),
}

impl Target {
    /// A target for `url`, checked with the config loader's rule ([`EndpointUrl`]), so a
    /// URL that loads is one the HTTP layer can send to. The error never repeats the URL.
    pub(crate) fn new(url: &str, bearer: Option<BearerToken>) -> Result<Self, TargetError> {
        let checked = EndpointUrl::parse(url).map_err(TargetError::Url)?;
        Self::checked(&checked, bearer)
    }

    /// A target for a URL the config loader already checked (a binding's): the rule is
    /// not run again on every call.
    pub(crate) fn checked(
        url: &EndpointUrl,
        bearer: Option<BearerToken>,
    ) -> Result<Self, TargetError> {
        let parsed: Uri = url
            .as_str()
            .parse()
            .map_err(|_| TargetError::Unsendable(url.origin().to_owned()))?;
        let secrets = Secrets::new(bearer.as_ref().map(BearerToken::expose));
        Ok(Self {
            url: parsed,
            key: url.as_str().to_owned(),
            origin: url.origin().to_owned(),
            host: url.host().clone(),
            port: url.port(),
            bearer,
            headers: Vec::new(),
            secrets,
            auth: None,
        })
    }

    /// `scheme://host[:port]`, for logs: never the path or query, which may hold keys.
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// This target with `headers` (a binding's, already checked) on every request. A
    /// value of [`SECRET_HEADER_LEN`] bytes or more is taken for a key (`X-Api-Key`) and is
    /// a secret of every call to this target, known process-wide; shorter ones are labels
    /// (`X-Team: search`) that would blank ordinary words if removed.
    pub(crate) fn with_headers(mut self, headers: &[(String, String)]) -> Self {
        self.headers = headers
            .iter()
            .map(|(name, value)| Header::sensitive(name.to_ascii_lowercase(), value.clone()))
            .collect();
        let keys: Vec<&str> = headers
            .iter()
            .map(|(_, value)| value.as_str())
            .filter(|value| value.len() >= SECRET_HEADER_LEN)
            .collect();
        if !keys.is_empty() {
            keys.iter()
                .for_each(|key| brain_mcp_proto::text::learn(key));
            self.secrets = self.secrets.with(keys);
        }
        self
    }

    /// `headers` followed by this target's own.
    pub(crate) fn and_headers(&self, mut headers: Vec<Header>) -> Vec<Header> {
        headers.extend(self.headers.iter().cloned());
        headers
    }

    /// This target with OAuth tokens got with `oauth` (instead of a static bearer token):
    /// the authorizer of `authorizers` (the client's) for this server and those
    /// credentials, whose secrets given in code join the target's.
    pub(crate) fn with_oauth(mut self, authorizers: &Authorizers, oauth: &OAuthClient) -> Self {
        self.secrets = self.secrets.union(&oauth.secrets());
        self.auth = Some(authorizers.get(&self.key, oauth));
        self
    }

    /// The token for a message that closes or follows up work (cancel, `DELETE`,
    /// `notifications/initialized`): the static one, or the OAuth token held while it
    /// has not expired, even inside its renewal margin.
    pub(crate) fn bearer_for_cleanup(&self) -> Option<BearerToken> {
        match &self.auth {
            Some(auth) => auth.bearer_for_cleanup(),
            None => self.bearer.clone(),
        }
    }

    /// Every secret of a call to this target now: the configured ones and the OAuth
    /// tokens held.
    pub(crate) fn secrets_now(&self) -> Secrets {
        match &self.auth {
            Some(auth) => self.secrets.union(&auth.secrets()),
            None => self.secrets.clone(),
        }
    }

    /// This target with `more` secrets to remove (the client's proxy credentials).
    pub(crate) fn with_secrets(mut self, more: &Secrets) -> Self {
        self.secrets = self.secrets.union(more);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_header_values_are_secrets_short_ones_labels() {
        let target = Target::new("http://127.0.0.1:1/mcp", None)
            .unwrap()
            .with_headers(&[
                ("X-Api-Key".into(), "sk-live-HEADER-0123456789".into()),
                ("X-Team".into(), "search".into()),
            ]);
        let echoed = "key sk-live-HEADER-0123456789 for search";
        assert_eq!(
            target.secrets_now().redact(echoed),
            "key [redacted] for search"
        );
        // Known to the process too: another call's text shows nothing of it.
        assert_eq!(Secrets::none().redact(echoed), "key [redacted] for search");
        assert!(!format!("{target:?}").contains("sk-live-HEADER"));
    }

    #[test]
    fn targets_need_http_urls() {
        assert!(Target::new("http://127.0.0.1:1/mcp", None).is_ok());
        assert!(Target::new("https://example.test/mcp", None).is_ok());
        let err = Target::new("ftp://x/mcp", None)
            .expect_err("not http")
            .to_string();
        assert!(err.contains("must be an http or https URL"), "{err}");
        assert!(Target::new("not a url", None).is_err());
        assert!(Target::new("/mcp", None).is_err());
        // The message never repeats the URL: its query may hold a key.
        let err = Target::new("http://h/mcp?key=s3cret&q=<x>", None)
            .expect_err("bad char")
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
        let target = Target::new("HTTP://H.example:8080/mcp?key=s3cret", None).expect("valid");
        assert_eq!(target.url.host(), Some("H.example"));
    }

    proptest::proptest! {
        /// Whatever the rule accepts, the HTTP layer can send to, at the same origin.
        #[test]
        fn the_rule_accepts_only_what_http_sends(
            scheme in "https?|HTTP",
            host in "[a-z0-9_-]{1,10}(\\.[a-z0-9x-]{1,10}){0,2}|\\[::1\\]|127\\.0\\.0\\.1|[0-9]{1,3}(\\.[0-9]{1,3}){0,3}",
            port in proptest::option::of(1u16..),
            tail in "[ -~]{0,40}",
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let url = format!("{scheme}://{host}{port}/{tail}");
            if let Ok(checked) = EndpointUrl::parse(&url) {
                let target = Target::new(&url, None);
                proptest::prop_assert!(target.is_ok(), "{url}: {:?}", target.err());
                let uri = target.map(|t| t.url).ok();
                let origin = uri.as_ref().map(|u| {
                    let host = u.host().unwrap_or_default().to_ascii_lowercase();
                    let scheme = u.scheme_str().unwrap_or_default().to_ascii_lowercase();
                    match u.port_u16() {
                        Some(p) => format!("{scheme}://{host}:{p}"),
                        None => format!("{scheme}://{host}"),
                    }
                });
                proptest::prop_assert_eq!(origin, Some(checked.origin().to_owned()));
                // And TLS accepts the host as a server name, so https fails at load, not
                // at call time.
                let host = host.trim_start_matches('[').trim_end_matches(']');
                proptest::prop_assert!(
                    rustls::pki_types::ServerName::try_from(host.to_owned()).is_ok(),
                    "{url}: TLS refuses {host}"
                );
            }
        }
    }
}
