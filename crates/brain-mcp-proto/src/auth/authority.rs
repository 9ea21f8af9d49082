//! Finding who grants tokens for a server: the documents to fetch, in order, and what
//! each answer means. A driver asks [`Search::step`] what to fetch, fetches it (bounded in
//! size and time) and hands the answer to [`Search::handle`] until the search ends with
//! an [`Authority`] or an [`AuthError`].
//!
//! The order is the MCP authorization chapter's: protected resource metadata (from the
//! challenge, then the well-known URLs), then the metadata of the authorization server it
//! names (RFC 8414, then OpenID Connect Discovery). A server without protected resource
//! metadata is treated as the 2025-03-26 revision said: its own origin is the
//! authorization server, with default endpoints when even that has no metadata.

use std::collections::VecDeque;

use super::AuthError;
use super::challenge::BearerChallenge;
use super::discovery::{
    authorization_server_urls, check_issuer, check_resource, legacy, protected_resource_urls,
};
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::url::{HttpUrl, check_endpoint, same_issuer};

/// What a client needs to ask for a token for one server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Authority {
    /// The `resource` parameter of every authorization and token request (RFC 8707):
    /// the metadata's resource, or the server's canonical URL when there is none.
    pub resource: String,
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// The authorization server's metadata (the 2025-03-26 defaults when it has none).
    pub server: ServerMetadata,
    /// The scopes the protected resource lists, if any.
    pub scopes_supported: Option<Vec<String>>,
    /// The server had no metadata at all: [`Self::server`] holds the 2025-03-26 default
    /// endpoints.
    pub defaults: bool,
}

/// The next thing a search needs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// GET this URL and hand the answer to [`Search::handle`].
    Fetch(String),
    /// The search is over.
    Found(Box<Authority>),
    /// The search failed; nothing may be asked of any authorization server.
    Failed(AuthError),
}

/// A search for a server's authority, one document at a time.
#[derive(Debug)]
pub struct Search {
    server: HttpUrl,
    pinned: Option<String>,
    state: State,
}

#[derive(Debug)]
enum State {
    Resource {
        urls: VecDeque<String>,
    },
    Server {
        resource: Option<ResourceMetadata>,
        issuer: String,
        urls: VecDeque<String>,
    },
    Over(Step),
}

impl Search {
    /// Starts a search for `server` after `challenge` (the 401's, if any). With `pinned`,
    /// the configured issuer of a client that holds a secret, the search fails unless the
    /// server's metadata names that issuer: a server never chooses where a secret goes.
    pub fn new(
        server: &HttpUrl,
        challenge: Option<&BearerChallenge>,
        pinned: Option<&str>,
    ) -> Self {
        let urls = protected_resource_urls(server, challenge).into();
        Self {
            server: server.clone(),
            pinned: pinned.map(str::to_owned),
            state: State::Resource { urls },
        }
    }

    /// What the search needs next.
    pub fn step(&self) -> Step {
        match &self.state {
            State::Resource { urls } | State::Server { urls, .. } => match urls.front() {
                Some(url) => Step::Fetch(url.clone()),
                None => Step::Failed(AuthError::NoMetadata),
            },
            State::Over(step) => step.clone(),
        }
    }

    /// The answer to the last [`Step::Fetch`]: its HTTP status and body, or `None` when
    /// nothing usable came back (no connection, a timeout, a body over the bound).
    pub fn handle(&mut self, answer: Option<(u16, &[u8])>) {
        let ok_body = answer.and_then(|(status, body)| (status == 200).then_some(body));
        let state = std::mem::replace(
            &mut self.state,
            State::Over(Step::Failed(AuthError::NoMetadata)),
        );
        self.state = match state {
            State::Resource { mut urls } => {
                urls.pop_front();
                match ok_body.map(ResourceMetadata::parse) {
                    Some(Ok(doc)) => self.after_resource(doc),
                    _ if !urls.is_empty() => State::Resource { urls },
                    _ => self.without_resource(),
                }
            }
            State::Server {
                resource,
                issuer,
                mut urls,
            } => {
                urls.pop_front();
                match ok_body.map(ServerMetadata::parse) {
                    Some(Ok(doc)) => match check_issuer(&doc.issuer, &issuer) {
                        Ok(()) => self.found(resource, issuer, doc),
                        Err(e) => State::Over(Step::Failed(e)),
                    },
                    _ if !urls.is_empty() => State::Server {
                        resource,
                        issuer,
                        urls,
                    },
                    // No metadata at all for a server without resource metadata: the
                    // 2025-03-26 default endpoints at its origin.
                    _ if resource.is_none() && self.pinned.is_none() => {
                        let (authorize, token, register) = legacy::default_endpoints(&self.server);
                        let doc = ServerMetadata {
                            issuer: issuer.clone(),
                            authorization_endpoint: Some(authorize),
                            token_endpoint: Some(token),
                            registration_endpoint: Some(register),
                            ..ServerMetadata::default()
                        };
                        let mut state = self.found(None, issuer, doc);
                        if let State::Over(Step::Found(found)) = &mut state {
                            found.defaults = true;
                        }
                        state
                    }
                    _ => State::Over(Step::Failed(AuthError::NoServerMetadata {
                        issuer: issuer.clone(),
                    })),
                }
            }
            over @ State::Over(_) => over,
        };
    }

    /// The resource metadata was read: check it, pick its authorization server.
    fn after_resource(&self, doc: ResourceMetadata) -> State {
        if let Err(e) = check_resource(&doc.resource, &self.server) {
            return State::Over(Step::Failed(e));
        }
        let issuer = match &self.pinned {
            Some(pinned) => doc
                .authorization_servers
                .iter()
                .find(|named| same_issuer(named, pinned))
                .cloned()
                .ok_or_else(|| AuthError::IssuerNotListed {
                    configured: pinned.clone(),
                }),
            None => doc
                .authorization_servers
                .first()
                .cloned()
                .ok_or(AuthError::NoAuthorizationServer),
        };
        match issuer.and_then(|i| self.server_search(Some(doc), i)) {
            Ok(state) => state,
            Err(e) => State::Over(Step::Failed(e)),
        }
    }

    /// No resource metadata anywhere: the configured issuer, else the server's origin
    /// (2025-03-26), whose metadata sits at the root well-known URL.
    fn without_resource(&self) -> State {
        let issuer = self.pinned.clone().unwrap_or_else(|| self.server.origin());
        let result = if self.pinned.is_some() {
            self.server_search(None, issuer)
        } else {
            Ok(State::Server {
                resource: None,
                issuer,
                urls: vec![legacy::metadata_url(&self.server)].into(),
            })
        };
        result.unwrap_or_else(|e| State::Over(Step::Failed(e)))
    }

    fn server_search(
        &self,
        resource: Option<ResourceMetadata>,
        issuer: String,
    ) -> Result<State, AuthError> {
        let parsed = check_endpoint(&issuer, &self.server).map_err(|why| AuthError::Url {
            what: "issuer",
            why,
        })?;
        Ok(State::Server {
            resource,
            issuer,
            urls: authorization_server_urls(&parsed).into(),
        })
    }

    fn found(
        &self,
        resource: Option<ResourceMetadata>,
        issuer: String,
        server: ServerMetadata,
    ) -> State {
        // Every endpoint the document names must be one a secret or a user may go to.
        let endpoints = [
            ("token endpoint", &server.token_endpoint),
            ("authorization endpoint", &server.authorization_endpoint),
            ("registration endpoint", &server.registration_endpoint),
        ];
        for (what, url) in endpoints {
            if let Some(url) = url
                && let Err(why) = check_endpoint(url, &self.server)
            {
                return State::Over(Step::Failed(AuthError::Url { what, why }));
            }
        }
        let (named, scopes_supported) = match resource {
            Some(doc) => (doc.resource, doc.scopes_supported),
            None => (self.server.canonical(), None),
        };
        State::Over(Step::Found(Box::new(Authority {
            resource: named,
            issuer,
            server,
            scopes_supported,
            defaults: false,
        })))
    }
}

#[cfg(test)]
#[path = "authority_tests.rs"]
mod tests;
