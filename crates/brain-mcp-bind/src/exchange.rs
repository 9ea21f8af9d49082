//! One request and its answer: headers per era, the POST, and reading to the response.

use brain_mcp_proto::headers::encode_header_str;
use brain_mcp_proto::jsonrpc::{self, ErrorCode, Incoming, Message, RequestId};
use brain_mcp_proto::mcp::methods;
use brain_mcp_proto::version::ProtocolVersion;
use brain_mcp_transport::{
    Expect, Inbound, McpHeaders, PostReply, PostRequest, ReplyStream, ResumePolicy, TransportError,
};
use bytes::Bytes;
use serde_json::value::RawValue;

use crate::client::{McpClient, Target};

/// Bytes a discovery or handshake exchange may read (the tool list can be large).
pub(crate) const CONTROL_BUDGET: usize = 8 * 1024 * 1024;

/// Resume attempts for a broken handshake-era stream (SEP-1699).
pub(crate) const RESUME_ATTEMPTS: u32 = 2;

/// Why a step of an exchange failed.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The transport failed; it says whether the request may have arrived.
    Transport(TransportError),
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The error code.
        code: ErrorCode,
        /// The server's message.
        message: String,
        /// The error's `data`, verbatim.
        data: Option<String>,
    },
    /// The server broke the protocol.
    Protocol(String),
    /// The server asked for user input (elicitation, sampling, roots, or `input_required`).
    UserInput(String),
    /// The result holds content Brain does not carry.
    Unsupported(String),
    /// The server refused our credentials (401 or 403).
    Refused(String),
}

impl From<TransportError> for StepError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}

/// How requests are framed on the wire: per session (handshake era) or self-describing (2026).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wire<'a> {
    /// Handshake era: the session id (if the server gave one) and the negotiated version
    /// (`None` before `initialize` has been answered).
    Handshake {
        /// `Mcp-Session-Id`.
        session: Option<&'a str>,
        /// The negotiated version, sent as `MCP-Protocol-Version` where that version has it.
        version: Option<ProtocolVersion>,
    },
    /// 2026 era at this version.
    Stateless(ProtocolVersion),
}

/// The MCP headers of one request.
pub(crate) fn headers(
    target: &Target,
    wire: Wire<'_>,
    method: &str,
    name: Option<&str>,
    params: Vec<(String, String)>,
) -> McpHeaders {
    let mut h = McpHeaders {
        bearer: target.bearer.clone(),
        ..McpHeaders::default()
    };
    match wire {
        Wire::Handshake { session, version } => {
            h.session_id = session.map(str::to_owned);
            h.protocol_version = version
                .filter(|v| v.uses_version_header())
                .map(|v| v.as_str().to_owned());
        }
        Wire::Stateless(version) => {
            h.protocol_version = Some(version.as_str().to_owned());
            h.method = Some(method.to_owned());
            h.name = name.map(encode_header_str);
            h.params = params;
        }
    }
    h
}

/// One message to POST.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// Its MCP headers.
    pub(crate) headers: McpHeaders,
    /// The encoded message.
    pub(crate) body: Vec<u8>,
    /// What the reply must be.
    pub(crate) expect: Expect,
    /// Bytes the reply may take.
    pub(crate) budget: usize,
    /// Whether it has no side effects (may be resent on a stale pooled connection).
    pub(crate) idempotent: bool,
}

/// POSTs one encoded message.
pub(crate) async fn post(
    client: &McpClient,
    target: &Target,
    wire: Wire<'_>,
    out: Outgoing,
) -> Result<PostReply, TransportError> {
    let Outgoing {
        headers,
        body,
        expect,
        budget,
        idempotent,
    } = out;
    let resume = match wire {
        Wire::Handshake { .. } => ResumePolicy::Handshake {
            max_attempts: RESUME_ATTEMPTS,
        },
        Wire::Stateless(_) => ResumePolicy::Never,
    };
    client
        .http()
        .post(PostRequest {
            url: target.url.clone(),
            body: Bytes::from(body),
            expect,
            headers,
            budget,
            resume,
            idempotent,
        })
        .await
}

/// Sends a request with no side effects and waits for its result, answering server pings
/// and refusing other server requests on the way.
pub(crate) async fn request(
    client: &McpClient,
    target: &Target,
    wire: Wire<'_>,
    method: &str,
    params: &impl serde::Serialize,
) -> Result<(Box<RawValue>, Option<String>), StepError> {
    let id = client.next_id();
    let body = jsonrpc::encode_request(&id, method, params)
        .map_err(|e| StepError::Protocol(format!("could not encode {method}: {e}")))?;
    let headers = headers(target, wire, method, None, Vec::new());
    let reply = post(
        client,
        target,
        wire,
        Outgoing {
            headers,
            body,
            expect: Expect::Response(id.clone()),
            budget: CONTROL_BUDGET,
            idempotent: true,
        },
    )
    .await?;
    let PostReply::Stream(mut stream) = reply else {
        return Err(StepError::Protocol(format!(
            "the server accepted {method} without answering it"
        )));
    };
    let session = stream.session_id().map(str::to_owned);
    loop {
        let inbound = next(&mut stream).await?;
        if inbound.is_final_response {
            return final_result(&inbound).map(|raw| (raw, session));
        }
        if let Some((req_id, req_method)) = server_request(&inbound) {
            respond_refusal(client, target, wire, &req_id, &req_method).await;
        }
    }
}

/// The next message of a reply; the end of the stream before our response is an error.
pub(crate) async fn next(stream: &mut ReplyStream) -> Result<Inbound, StepError> {
    match stream.next().await {
        Some(Ok(inbound)) => Ok(inbound),
        Some(Err(e)) => Err(StepError::Transport(e)),
        None => Err(StepError::Protocol(
            "the reply ended before the response arrived".into(),
        )),
    }
}

/// The result of our final response, or its JSON-RPC error.
pub(crate) fn final_result(inbound: &Inbound) -> Result<Box<RawValue>, StepError> {
    match jsonrpc::decode(inbound.text.as_bytes()) {
        Ok(Incoming::Single(Message::Response(r))) => Ok(r.result.to_owned()),
        Ok(Incoming::Single(Message::Error(e))) => Err(StepError::Rpc {
            code: e.error.code,
            message: e.error.message.into_owned(),
            data: e.error.data.map(|d| d.get().to_owned()),
        }),
        Ok(_) => Err(StepError::Protocol(
            "the response is not a JSON-RPC response".into(),
        )),
        Err(e) => Err(StepError::Protocol(format!("malformed response: {e}"))),
    }
}

/// The id and method of a server-to-client request, if `inbound` is one.
pub(crate) fn server_request(inbound: &Inbound) -> Option<(RequestId, String)> {
    match jsonrpc::decode(inbound.text.as_bytes()) {
        Ok(Incoming::Single(Message::Request(r))) => Some((r.id, r.method.into_owned())),
        _ => None,
    }
}

/// Answers a server request: `ping` with an empty result, anything else with an error,
/// since Brain declares no client capabilities. Only handshake-era sessions get answers
/// (2026 servers may not send requests on a reply stream). Failures are ignored: the
/// server's own timeout covers a lost answer.
pub(crate) async fn respond_refusal(
    client: &McpClient,
    target: &Target,
    wire: Wire<'_>,
    id: &RequestId,
    method: &str,
) {
    if !matches!(wire, Wire::Handshake { .. }) {
        return;
    }
    let body = if method == methods::PING {
        jsonrpc::encode_response(id, &serde_json::json!({})).unwrap_or_default()
    } else {
        jsonrpc::encode_error(
            Some(id),
            ErrorCode::METHOD_NOT_FOUND,
            &format!("{method} is not supported: this client declared no such capability"),
            None,
        )
    };
    post_unanswered(client, target, wire, method, body).await;
}

/// Bytes the reply to a message that expects none (a notification, our answer to a
/// server request) may take.
const UNANSWERED_BUDGET: usize = 64 * 1024;

/// POSTs a message that expects no reply, best effort and bounded by
/// [`CLEANUP_STEP_DEADLINE`](crate::client::CLEANUP_STEP_DEADLINE): failures are ignored,
/// since the server's own timeouts cover a lost message.
pub(crate) async fn post_unanswered(
    client: &McpClient,
    target: &Target,
    wire: Wire<'_>,
    method: &str,
    body: Vec<u8>,
) {
    let headers = headers(target, wire, method, None, Vec::new());
    let send = post(
        client,
        target,
        wire,
        Outgoing {
            headers,
            body,
            expect: Expect::Accepted,
            budget: UNANSWERED_BUDGET,
            idempotent: false,
        },
    );
    let _ = tokio::time::timeout(crate::client::CLEANUP_STEP_DEADLINE, send).await;
}
