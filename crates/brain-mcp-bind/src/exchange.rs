//! Moving the core's messages over the transport, and reading the answers of requests
//! without side effects. No protocol decision is made here: the client core
//! (`brain_mcp_proto::client`) makes them.

use brain_mcp_proto::client::listing::{Exchange, Step};
use brain_mcp_proto::client::{CallError, Framing, Outgoing, RpcError};
use brain_mcp_transport::{
    ErrorKind as TransportKind, Inbound, PostReply, PostRequest, ReplyStream, TransportError,
};
use serde_json::value::RawValue;

use tracing::Instrument;

use crate::client::{CLEANUP_STEP_DEADLINE, McpClient, Target};
use crate::observe;

/// Bytes a discovery or handshake exchange may read (the tool list can be large).
pub(crate) const CONTROL_BUDGET: usize = 8 * 1024 * 1024;
/// Bytes the reply to a message that expects none may take.
const UNANSWERED_BUDGET: usize = 64 * 1024;

/// Why a step of an exchange failed.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The transport failed; it says whether the request may have arrived.
    Transport(TransportError),
    /// The server answered with a JSON-RPC error, in a `2xx` reply (`status` `None`) or
    /// with an error status.
    Rpc {
        /// The error.
        error: RpcError,
        /// The HTTP error status it came with, if any.
        status: Option<u16>,
    },
    /// The server broke the protocol.
    Protocol(String),
    /// The server asked for user input the client cannot give.
    UserInput(String),
    /// The result holds content Brain does not carry.
    Unsupported(String),
    /// The server refused our credentials (401 or 403).
    Refused(String),
    /// The session the request ran in is gone.
    SessionExpired,
    /// The server did not give a definite answer in time (no connection, 408, 429, 5xx
    /// to the era probe, retried until the deadline).
    Unreachable(String),
}

impl From<TransportError> for StepError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}

impl From<CallError> for StepError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Rpc { error, .. } => Self::Rpc {
                error,
                status: None,
            },
            CallError::NeedsInput(m) => Self::UserInput(m),
            CallError::SessionExpired => Self::SessionExpired,
            other => Self::Protocol(other.to_string()),
        }
    }
}

/// POSTs one of the core's messages to `target` with a read budget of `budget` bytes.
pub(crate) async fn post(
    client: &McpClient,
    target: &Target,
    out: Outgoing,
    budget: usize,
) -> Result<PostReply, TransportError> {
    let span = observe::exchange_span(target, &out);
    let mut req = PostRequest::new(target.url.clone(), out.body, out.expect);
    req.headers = target.and_headers(out.headers);
    req.bearer = target.bearer.clone();
    req.secrets = target.secrets.clone();
    req.budget = budget;
    req.resume_attempts = out.resume_attempts;
    req.resume_headers = target.and_headers(out.resume_headers);
    req.idempotent = out.idempotent;
    client.http().post(req).instrument(span).await
}

/// POSTs a message that expects no reply, best effort and bounded by
/// [`CLEANUP_STEP_DEADLINE`] (on the client's shared background timer, so up to
/// [`BACKGROUND_GRID`](brain_mcp_transport::BACKGROUND_GRID) later): failures are
/// ignored, since the server's own timeouts cover a lost message.
pub(crate) async fn post_unanswered(client: &McpClient, target: &Target, out: Outgoing) {
    let send = post(client, target, out, UNANSWERED_BUDGET);
    let timer = client.http().background_timer();
    let _ = timer.timeout(CLEANUP_STEP_DEADLINE, send).await;
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

/// Sends a request without side effects (`initialize`, a page of `tools/list`) and reads
/// its answer: the result and the reply's session id. The core answers server requests
/// on the way and reads JSON-RPC errors, in the body or with an error status, one way.
pub(crate) async fn request(
    client: &McpClient,
    target: &Target,
    framing: &Framing,
    out: Outgoing,
) -> Result<(Box<RawValue>, Option<String>), (StepError, Option<CallError>)> {
    let exchange = Exchange::new(framing.clone());
    let method = out.method.clone();
    let reply = match post(client, target, out, CONTROL_BUDGET).await {
        Ok(reply) => reply,
        Err(e) => return Err(status_error(&exchange, e)),
    };
    let PostReply::Stream(mut stream) = reply else {
        return Err((
            StepError::Protocol(format!("the server accepted {method} without answering it")),
            None,
        ));
    };
    let session = stream.session_id().map(str::to_owned);
    loop {
        let inbound = match next(&mut stream).await {
            Ok(inbound) => inbound,
            Err(StepError::Transport(e)) => return Err(status_error(&exchange, e)),
            Err(other) => return Err((other, None)),
        };
        if inbound.is_final_response {
            return match exchange.handle_response(&inbound.text) {
                Ok(raw) => Ok((raw, session)),
                Err(e) => Err((StepError::from(e.clone()), Some(e))),
            };
        }
        match exchange.handle_message(&inbound.text) {
            Step::Send(answer) => post_unanswered(client, target, answer).await,
            Step::Done(Err(e)) => return Err((StepError::from(e.clone()), Some(e))),
            _ => {}
        }
    }
}

/// A transport error, unless the core decides what its status means (a JSON-RPC error
/// with any status, an expired session); then the core's verdict comes too.
fn status_error(exchange: &Exchange, e: TransportError) -> (StepError, Option<CallError>) {
    if let TransportKind::Status { status, rpc, .. } = e.kind()
        && let Some(decided) = exchange.handle_status(status.as_u16(), rpc.clone())
    {
        return (
            with_status(StepError::from(decided.clone()), status.as_u16()),
            Some(decided),
        );
    }
    (StepError::Transport(e), None)
}

/// `e` with the HTTP status a JSON-RPC error came with, for the message.
pub(crate) fn with_status(e: StepError, status: u16) -> StepError {
    match e {
        StepError::Rpc { error, .. } => StepError::Rpc {
            error,
            status: Some(status),
        },
        other => other,
    }
}
