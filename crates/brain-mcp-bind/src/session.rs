//! A handshake-era MCP session for one call (or one discovery), closed whatever happens.

use brain_mcp_proto::client::Framing;
use brain_mcp_proto::client::handshake;
use brain_mcp_proto::jsonrpc::RequestId;
use brain_mcp_transport::PostReply;

use crate::client::{CLEANUP_STEP_DEADLINE, McpClient, Target};
use crate::exchange::{self, StepError};
use crate::observe;
use tracing::Instrument;

/// An open session. Dropping it ends the session off the caller's path: a background task
/// sends the core's cancel for a request still in flight, then the DELETE,
/// each under [`CLEANUP_STEP_DEADLINE`].
#[derive(Debug)]
pub(crate) struct Session {
    client: McpClient,
    target: Target,
    framing: Framing,
    /// The request in flight, cancelled if the session ends before it is answered.
    in_flight: Option<RequestId>,
}

impl Session {
    /// A session the server opened, framed by `framing` (its id, if any).
    pub(crate) fn new(client: McpClient, target: Target, framing: Framing) -> Self {
        Self {
            client,
            target,
            framing,
            in_flight: None,
        }
    }

    /// Records the negotiated framing.
    pub(crate) fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
    }

    /// How requests in this session are framed.
    pub(crate) fn framing(&self) -> &Framing {
        &self.framing
    }

    /// Sets the request to cancel if the session ends while it is in flight (`None` once
    /// it was answered). The cancel is built only then.
    pub(crate) fn set_in_flight(&mut self, request: Option<RequestId>) {
        self.in_flight = request;
    }

    /// Sends `notifications/initialized`.
    pub(crate) async fn notify_initialized(&self) -> Result<(), StepError> {
        let out = handshake::initialized(&self.framing);
        match exchange::post(&self.client, &self.target, out, exchange::CONTROL_BUDGET).await? {
            PostReply::Accepted => Ok(()),
            PostReply::Stream(_) => Err(StepError::Protocol(
                "the server answered notifications/initialized with a message stream".into(),
            )),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let cancel = self
            .in_flight
            .take()
            .and_then(|id| handshake::abandoned(&self.framing, id));
        let close = handshake::close(&self.framing);
        if cancel.is_none() && close.is_none() {
            return;
        }
        let client = self.client.clone();
        let target = self.target.clone();
        let cleanup_client = client.clone();
        let session_id = self.framing.session_id().map(str::to_owned);
        // The cleanup's events belong to the call (or discovery) that opened the session.
        let parent = tracing::Span::current();
        let work = async move {
            if let Some(cancel) = cancel {
                observe::cancel_sent();
                exchange::post_unanswered(&cleanup_client, &target, cancel).await;
            }
            if let Some(headers) = close {
                let headers = target.and_headers(headers);
                let answer = cleanup_client
                    .http()
                    .delete(
                        &target.url,
                        &headers,
                        target.bearer.as_ref(),
                        &target.secrets,
                        CLEANUP_STEP_DEADLINE,
                    )
                    .instrument(observe::delete_span(&target, session_id.as_deref()))
                    .await;
                let status = answer.as_ref().ok().map(http::StatusCode::as_u16);
                let closed =
                    status.is_some_and(|s| (200..300).contains(&s) || s == 404 || s == 405);
                cleanup_client.sessions().ended(closed);
                observe::session_ended(&target, session_id.as_deref(), closed, status);
            }
        };
        client.spawn_cleanup(work.instrument(parent));
    }
}
