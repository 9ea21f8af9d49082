//! A handshake-era MCP session for one call, closed whatever happens to the call.

use brain_mcp_proto::jsonrpc::{self, RequestId};
use brain_mcp_proto::mcp::{CancelledParams, methods};
use brain_mcp_proto::version::ProtocolVersion;
use brain_mcp_transport::{Expect, PostReply};

use crate::client::{CLEANUP_STEP_DEADLINE, McpClient, Target};
use crate::exchange::{self, Outgoing, StepError, Wire};

/// An open session. Dropping it ends the session off the caller's path: a background task
/// sends `notifications/cancelled` for a request still in flight, then the DELETE, each
/// under [`CLEANUP_STEP_DEADLINE`].
#[derive(Debug)]
pub(crate) struct Session {
    client: McpClient,
    target: Target,
    id: Option<String>,
    version: Option<ProtocolVersion>,
    in_flight: Option<RequestId>,
}

impl Session {
    /// A session the server opened with `id` (servers may run without session ids).
    pub(crate) fn new(client: McpClient, target: Target, id: Option<String>) -> Self {
        Self {
            client,
            target,
            id,
            version: None,
            in_flight: None,
        }
    }

    /// Records the negotiated version.
    pub(crate) fn set_version(&mut self, version: ProtocolVersion) {
        self.version = Some(version);
    }

    /// How requests in this session are framed.
    pub(crate) fn wire(&self) -> Wire<'_> {
        Wire::Handshake {
            session: self.id.as_deref(),
            version: self.version,
        }
    }

    /// Marks `id` as sent and unanswered: dropping the session now cancels it first.
    pub(crate) fn set_in_flight(&mut self, id: Option<RequestId>) {
        self.in_flight = id;
    }

    /// Sends `notifications/initialized`.
    pub(crate) async fn notify_initialized(&self) -> Result<(), StepError> {
        let body = jsonrpc::encode_bare_notification(methods::INITIALIZED);
        let headers = exchange::headers(
            &self.target,
            self.wire(),
            methods::INITIALIZED,
            None,
            Vec::new(),
        );
        let reply = exchange::post(
            &self.client,
            &self.target,
            self.wire(),
            Outgoing {
                headers,
                body,
                expect: Expect::Accepted,
                budget: exchange::CONTROL_BUDGET,
                idempotent: true,
            },
        )
        .await?;
        match reply {
            PostReply::Accepted => Ok(()),
            PostReply::Stream(_) => Err(StepError::Protocol(
                "the server answered notifications/initialized with a message stream".into(),
            )),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let client = self.client.clone();
        let target = self.target.clone();
        let id = self.id.take();
        let version = self.version;
        let in_flight = self.in_flight.take();
        if id.is_none() && in_flight.is_none() {
            return;
        }
        let cleanup_client = client.clone();
        client.spawn_cleanup(async move {
            let wire = Wire::Handshake {
                session: id.as_deref(),
                version,
            };
            if let Some(request_id) = in_flight {
                cancel(&cleanup_client, &target, wire, request_id).await;
            }
            if let Some(session) = id.as_deref() {
                let headers = exchange::headers(&target, wire, "", None, Vec::new());
                let _ = cleanup_client
                    .http()
                    .delete_session(&target.url, session, &headers, CLEANUP_STEP_DEADLINE)
                    .await;
            }
        });
    }
}

/// Sends `notifications/cancelled` for `request_id`, bounded.
async fn cancel(client: &McpClient, target: &Target, wire: Wire<'_>, request_id: RequestId) {
    let params = CancelledParams {
        request_id: Some(request_id),
        reason: Some("the caller stopped waiting (timeout or interruption)".into()),
        meta: None,
        extra: serde_json::Map::new(),
    };
    let Ok(body) = jsonrpc::encode_notification(methods::CANCELLED, Some(&params)) else {
        return;
    };
    exchange::post_unanswered(client, target, wire, methods::CANCELLED, body).await;
}
