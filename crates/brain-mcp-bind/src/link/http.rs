//! A link over Streamable HTTP: the transport's pooled client and one target.

use std::sync::Arc;

use brain_mcp_proto::client::{Framing, Outgoing, handshake};
use brain_mcp_transport::{PostReply, PostRequest, ReplyStream, TransportError};
use tracing::Instrument;

use crate::client::{CLEANUP_STEP_DEADLINE, McpClient};
use crate::observe;
use crate::target::Target;

/// Bytes the reply to a message that expects none may take.
const UNANSWERED_BUDGET: usize = 64 * 1024;

/// Requests to one HTTP server.
#[derive(Clone, Debug)]
pub(crate) struct HttpLink {
    client: McpClient,
    target: Arc<Target>,
}

impl HttpLink {
    pub(crate) fn new(client: McpClient, target: Arc<Target>) -> Self {
        Self { client, target }
    }

    /// The server this link reaches.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// The transport's request for `out`, with this target's endpoint and credentials.
    fn post_request(&self, out: Outgoing, budget: usize) -> PostRequest {
        let target = &self.target;
        let mut req = PostRequest::new(target.url.clone(), out.body, out.expect);
        req.headers = target.and_headers(out.headers);
        req.bearer = target.bearer.clone();
        req.secrets = target.secrets.clone();
        req.budget = budget;
        req.resume_attempts = out.resume_attempts;
        req.resume_headers = target.and_headers(out.resume_headers);
        req.idempotent = out.idempotent;
        req
    }

    async fn post(&self, out: Outgoing, budget: usize) -> Result<PostReply, TransportError> {
        let span = observe::exchange_span(&self.target, &out);
        let req = self.post_request(out, budget);
        self.client.http().post(req).instrument(span).await
    }

    pub(super) async fn request(
        &self,
        out: Outgoing,
        budget: usize,
    ) -> Result<ReplyStream, TransportError> {
        let span = observe::exchange_span(&self.target, &out);
        let req = self.post_request(out, budget);
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
    pub(super) async fn end(&self, framing: &Framing) {
        let Some(headers) = handshake::close(framing) else {
            return;
        };
        let target = &self.target;
        let id = framing.session_id();
        let headers = target.and_headers(headers);
        let answer = self
            .client
            .http()
            .delete(
                &target.url,
                &headers,
                target.bearer.as_ref(),
                &target.secrets,
                CLEANUP_STEP_DEADLINE,
            )
            .instrument(observe::delete_span(target, id))
            .await;
        let status = answer.as_ref().ok().map(http::StatusCode::as_u16);
        let closed = status.is_some_and(handshake::closed);
        self.client.sessions().ended(closed);
        observe::session_ended(target, id, closed, status);
    }
}
