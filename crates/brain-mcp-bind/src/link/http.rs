//! A link over Streamable HTTP: the transport's pooled client and one target.

use std::sync::Arc;
use std::time::Duration;

use brain_mcp_proto::auth::HttpUrl;
use brain_mcp_proto::auth::dpop::{self, Demand};
use brain_mcp_proto::auth::retry::{Refusal, Rounds};
use brain_mcp_proto::client::{Framing, Header, Outgoing, handshake};
use brain_mcp_transport::{BearerToken, PostReply, PostRequest, ReplyStream, TransportError};
use tracing::Instrument;

use super::{Ended, LinkError};
use crate::auth::{AuthFailure, Authorizer, Reach};
use crate::client::{CLEANUP_STEP_DEADLINE, McpClient};

/// The most of a cleanup step ([`CLEANUP_STEP_DEADLINE`], 2 s) a quiet renewal may take;
/// the message keeps the rest.
const RENEWAL_BUDGET: Duration = Duration::from_secs(1);
use crate::observe::{self, Peer};
use crate::target::Target;

/// Bytes the reply to a message that expects none may take.
const UNANSWERED_BUDGET: usize = 64 * 1024;

/// Requests to one HTTP server.
#[derive(Clone, Debug)]
pub(crate) struct HttpLink {
    client: McpClient,
    target: Arc<Target>,
    peer: Peer,
}

impl HttpLink {
    pub(crate) fn new(client: McpClient, target: Arc<Target>) -> Self {
        let peer = Peer::http(target.host.clone(), target.port);
        Self {
            client,
            target,
            peer,
        }
    }

    /// The server's host and port, as telemetry names them.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The server this link reaches.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// The transport's request for `out`, with this target's endpoint and credentials.
    fn post_request(
        &self,
        out: Outgoing,
        budget: usize,
        bearer: Option<BearerToken>,
    ) -> PostRequest {
        let target = &self.target;
        let mut req = PostRequest::new(target.url.clone(), out.body, out.expect);
        req.headers = target.and_headers(out.headers);
        req.secrets = target.secrets_now();
        if let Some((proof, text)) = self.proof("POST", bearer.as_ref()) {
            // A DPoP-bound token goes with a proof of its own for each request, each
            // resuming GET included.
            req.headers.push(proof);
            let mut texts = vec![text];
            for _ in 0..out.resume_attempts {
                if let Some((proof, text)) = self.proof("GET", bearer.as_ref()) {
                    req.resume_proofs.push(proof);
                    texts.push(text);
                }
            }
            req.secrets = req.secrets.with(texts);
        }
        req.bearer = bearer;
        req.budget = budget;
        req.resume_attempts = out.resume_attempts;
        req.resume_headers = target.and_headers(out.resume_headers);
        req.idempotent = out.idempotent;
        req
    }

    /// The `DPoP` header (and the proof, a secret of the request) of a `htm` request to
    /// this server carrying `bearer`, when it is DPoP-bound; `None` for a bearer token, at
    /// the cost of one check.
    fn proof(&self, htm: &str, bearer: Option<&BearerToken>) -> Option<(Header, String)> {
        let token = bearer.filter(|b| b.is_dpop())?;
        let auth = self.target.auth.as_ref()?;
        auth.resource_proof(htm, &self.target.url.to_string(), token)
    }

    /// Sends a message that closes or follows up work (a notification), with the token
    /// [`Self::cleanup_bearer`] picks.
    async fn post(&self, out: Outgoing, budget: usize) -> Result<PostReply, TransportError> {
        let span = observe::exchange_span(&self.target, &out);
        let bearer = self.cleanup_bearer(RENEWAL_BUDGET).await;
        if !bearer.as_ref().is_some_and(BearerToken::is_dpop) {
            let req = self.post_request(out, budget, bearer);
            return self.client.http().post(req).instrument(span).await;
        }
        // Boxed: the nonce rounds' state stays out of every message's future.
        Box::pin(self.post_with_proofs(out, budget, bearer, span)).await
    }

    /// [`Self::post`] with a DPoP-bound token: a proof of its own, and again with the
    /// server's nonce when it asks for one, within the core's rounds.
    async fn post_with_proofs(
        &self,
        out: Outgoing,
        budget: usize,
        bearer: Option<BearerToken>,
        span: tracing::Span,
    ) -> Result<PostReply, TransportError> {
        let mut rounds = Rounds::new(true);
        loop {
            let req = self.post_request(out.clone(), budget, bearer.clone());
            let result = self.client.http().post(req).instrument(span.clone()).await;
            // A DPoP nonce demanded: the message did not run; again with the nonce.
            match &result {
                Err(e) if self.takes_nonce(e, bearer.as_ref(), &mut rounds) => {}
                _ => return result,
            }
        }
    }

    /// Whether a request refused with `e` goes again: a 401 demanding a DPoP nonce of a
    /// request that carried a DPoP-bound token, within `rounds` (the nonce is kept for
    /// the next proofs).
    fn takes_nonce(
        &self,
        e: &TransportError,
        bearer: Option<&BearerToken>,
        rounds: &mut Rounds,
    ) -> bool {
        let (Some(auth), Some((status, challenge, nonce))) = (&self.target.auth, refusal(e)) else {
            return false;
        };
        if !bearer.is_some_and(BearerToken::is_dpop) {
            return false;
        }
        match dpop::demand(status, challenge.as_deref(), nonce.as_deref()) {
            Demand::Nonce(nonce) => {
                auth.resource_nonce(&nonce);
                rounds.after_nonce() == Refusal::Resend
            }
            _ => false,
        }
    }

    /// The token for a message that closes or follows up work: the one held while it
    /// has not expired (inside its renewal margin too); else, for an OAuth server, one
    /// renewed quietly (refresh token or client credentials at the authority already
    /// known: [`Authorizer::renew_quietly`]) within `budget`. A message never goes bare
    /// while a token can be had that way: the server would refuse it, and a cancel
    /// refused leaves the tool running.
    async fn cleanup_bearer(&self, budget: Duration) -> Option<BearerToken> {
        if let Some(token) = self.target.bearer_for_cleanup() {
            return Some(token);
        }
        let auth = Arc::clone(self.target.auth.as_ref()?);
        let server = HttpUrl::parse(&self.target.key).ok()?;
        // The renewal runs to its end on a task of its own: only the wait for it is
        // bounded. Dropped halfway, a refresh the authorization server already answered
        // would lose the rotated refresh token it returned.
        let http = self.client.http().clone();
        let url = self.target.url.clone();
        let (allow_private, class) = (
            self.client.allows_private_auth_destinations(),
            self.client.server_class_given(),
        );
        let renewal = tokio::spawn(async move {
            let reach = Reach {
                http: &http,
                server: &url,
                allow_private,
                class,
            };
            auth.renew_quietly(&reach, &server).await
        });
        let timer = self.client.http().background_timer();
        match timer.timeout(budget, renewal).await {
            Some(Ok(token)) => token,
            Some(Err(_)) | None => None,
        }
    }

    /// What the URLs this server names may reach.
    fn reach(&self) -> Reach<'_> {
        Reach {
            http: self.client.http(),
            server: &self.target.url,
            allow_private: self.client.allows_private_auth_destinations(),
            class: self.client.server_class_given(),
        }
    }

    /// Sends a request and returns its replies. A server that wants an OAuth token gets
    /// one and the request again, as often as the core's rounds allow: a refused request
    /// did not run, so at-most-once holds.
    pub(super) async fn request(
        &self,
        out: Outgoing,
        budget: usize,
    ) -> Result<ReplyStream, LinkError> {
        let Some(auth) = &self.target.auth else {
            return Ok(self
                .request_once(out, budget, self.target.bearer.clone())
                .await?);
        };
        // Boxed: the authorization flow's state stays out of the futures of calls that
        // need none.
        Box::pin(self.request_authorized(auth, out, budget)).await
    }

    /// [`Self::request`] to a server that takes OAuth tokens.
    async fn request_authorized(
        &self,
        auth: &Authorizer,
        out: Outgoing,
        budget: usize,
    ) -> Result<ReplyStream, LinkError> {
        let refused = |failure: AuthFailure| {
            crate::auth::no_token(&self.target.key, &failure);
            LinkError::Authorization(failure)
        };
        let server = HttpUrl::parse(&self.target.key).map_err(|_| {
            refused(AuthFailure::config(
                "authorization: the server URL cannot be used",
            ))
        })?;
        let reach = self.reach();
        let mut bearer = auth.prepare(&reach, &server).await.map_err(refused)?;
        let mut rounds = Rounds::new(bearer.is_some());
        loop {
            let result = self.request_once(out.clone(), budget, bearer.clone()).await;
            let refusal = match &result {
                Err(e) => refusal(e),
                Ok(_) => None,
            };
            let Some((status, challenge, nonce)) = refusal else {
                return Ok(result?);
            };
            let demand = dpop::demand(status, challenge.as_deref(), nonce.as_deref());
            let sent_dpop = bearer.as_ref().is_some_and(BearerToken::is_dpop);
            match demand {
                // The proof lacked the server's nonce (RFC 9449 §9): the same token
                // again, with a proof that carries it.
                Demand::Nonce(nonce) if sent_dpop => {
                    auth.resource_nonce(&nonce);
                    match rounds.after_nonce() {
                        Refusal::GiveUp(why) => {
                            return Err(refused(AuthFailure::resource_server(format!(
                                "authorization: {why} ({status})"
                            ))));
                        }
                        _ => continue,
                    }
                }
                // The server takes DPoP-bound tokens only.
                Demand::Bound | Demand::Nonce(_) => auth.require_dpop(),
                _ => {}
            }
            let read = challenge.as_deref().and_then(dpop::any_challenge);
            let step_up = match rounds.after(status, read.as_ref(), auth.scope().as_deref()) {
                Refusal::Authorize => None,
                Refusal::StepUp(scope) => Some(scope),
                Refusal::GiveUp(why) => {
                    return Err(refused(AuthFailure::resource_server(format!(
                        "authorization: {why} ({status})"
                    ))));
                }
                _ => return Ok(result?),
            };
            let token = auth
                .authorize(&reach, &server, read.as_ref(), bearer.as_ref(), step_up)
                .await
                .map_err(refused)?;
            bearer = Some(token);
        }
    }

    async fn request_once(
        &self,
        out: Outgoing,
        budget: usize,
        bearer: Option<BearerToken>,
    ) -> Result<ReplyStream, TransportError> {
        let span = observe::exchange_span(&self.target, &out);
        let req = self.post_request(out, budget, bearer);
        self.client.http().request(req).instrument(span).await
    }

    pub(super) async fn send(&self, out: Outgoing) -> Result<(), TransportError> {
        // The transport reads only the status of a message that expects no answer.
        self.post(out, UNANSWERED_BUDGET).await.map(drop)
    }

    pub(super) async fn notify(&self, out: Outgoing) {
        let timer = self.client.http().background_timer();
        let _ = timer
            .timeout(CLEANUP_STEP_DEADLINE, self.post(out, UNANSWERED_BUDGET))
            .await;
    }

    /// The session's `DELETE`, when the server gave a session id; the core says what the
    /// answer means, and the client counts it.
    pub(super) async fn end(&self, framing: &Framing) -> Ended {
        let Some(headers) = handshake::close(framing) else {
            return Ended::Closed;
        };
        let target = &self.target;
        let id = framing.session_id();
        let headers = target.and_headers(headers);
        // One step for both: the renewal, if any, and the DELETE.
        let started = std::time::Instant::now();
        let bearer = self.cleanup_bearer(RENEWAL_BUDGET).await;
        let answer = if bearer.as_ref().is_some_and(BearerToken::is_dpop) {
            // Boxed, as a message's rounds are.
            Box::pin(self.delete_with_proofs(headers, bearer.as_ref(), started))
                .instrument(observe::delete_span(target, id))
                .await
        } else {
            let left = CLEANUP_STEP_DEADLINE.saturating_sub(started.elapsed());
            self.client
                .http()
                .delete(
                    &target.url,
                    &headers,
                    bearer.as_ref(),
                    &target.secrets_now(),
                    left,
                )
                .instrument(observe::delete_span(target, id))
                .await
        };
        let status = answer.as_ref().ok().map(http::StatusCode::as_u16);
        let closed = status.is_some_and(handshake::closed);
        self.client.sessions().ended(closed);
        observe::session_ended(target, id, closed, status);
        if closed {
            Ended::Closed
        } else {
            Ended::Failed(status)
        }
    }
}

impl HttpLink {
    /// A session's `DELETE` with a DPoP-bound token: a proof of its own (`htm`
    /// `DELETE`), and again with the server's nonce when it asks for one, within the
    /// core's rounds and the cleanup step's deadline (counted from `started`).
    async fn delete_with_proofs(
        &self,
        headers: Vec<Header>,
        bearer: Option<&BearerToken>,
        started: std::time::Instant,
    ) -> Result<http::StatusCode, TransportError> {
        let target = &self.target;
        let mut rounds = Rounds::new(true);
        loop {
            let mut sent = headers.clone();
            let mut secrets = target.secrets_now();
            if let Some((proof, text)) = self.proof("DELETE", bearer) {
                sent.push(proof);
                secrets = secrets.with([text]);
            }
            let left = CLEANUP_STEP_DEADLINE.saturating_sub(started.elapsed());
            let answer = self
                .client
                .http()
                .delete_answer(&target.url, &sent, bearer, &secrets, left)
                .await?;
            let demand = dpop::demand(
                answer.status.as_u16(),
                answer.www_authenticate.as_deref(),
                answer.dpop_nonce.as_deref(),
            );
            match (demand, &target.auth) {
                (Demand::Nonce(nonce), Some(auth)) if rounds.after_nonce() == Refusal::Resend => {
                    auth.resource_nonce(&nonce);
                }
                _ => return Ok(answer.status),
            }
        }
    }
}

/// The status, challenge and DPoP nonce of a refusal for want of authorization (401,
/// 403).
fn refusal(e: &TransportError) -> Option<(u16, Option<String>, Option<String>)> {
    let status = e.status()?.as_u16();
    matches!(status, 401 | 403).then(|| {
        (
            status,
            e.www_authenticate().map(str::to_owned),
            e.dpop_nonce().map(str::to_owned),
        )
    })
}
