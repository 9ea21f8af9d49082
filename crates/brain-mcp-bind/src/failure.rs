//! Mapping what went wrong to Brain's failure kinds and `unknown_outcome`, and to messages
//! that are safe to hand on: the token removed first, then each of the server's strings
//! cut to [`FRAGMENT_LIMIT`] bytes (in that order, so a cut never leaves part of a token).

use brain_mcp_proto::client::RpcError;
use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};
use brain_mcp_transport::{Delivery, ErrorKind as TransportKind, MESSAGE_LIMIT, TransportError};
use brain_tools_core::{ErrorKind, ToolFailure};

use crate::client::Target;
use crate::exchange::StepError;

/// A failure before `tools/call` was sent: probing the era or opening the session.
/// `unknown_outcome` is false: the tool was never invoked.
pub(crate) fn before_call(target: &Target, error: StepError) -> ToolFailure {
    match error {
        StepError::Transport(e) => {
            let kind = if reached_server(&e) {
                ErrorKind::HandshakeFailed
            } else {
                ErrorKind::ConnectFailed
            };
            ToolFailure::before_send(kind, safe(target, &e.to_string(), MESSAGE_LIMIT))
        }
        StepError::Rpc { error, status } => ToolFailure::before_send(
            ErrorKind::HandshakeFailed,
            format!(
                "the server refused the handshake: {}",
                rpc_text(target, &error, status)
            ),
        ),
        StepError::Refused(m) | StepError::Unreachable(m) => {
            ToolFailure::before_send(ErrorKind::ConnectFailed, safe(target, &m, MESSAGE_LIMIT))
        }
        StepError::SessionExpired => ToolFailure::before_send(
            ErrorKind::HandshakeFailed,
            "the server ended the session before the call was sent",
        ),
        StepError::Protocol(m) | StepError::UserInput(m) | StepError::Unsupported(m) => {
            ToolFailure::before_send(ErrorKind::HandshakeFailed, safe(target, &m, MESSAGE_LIMIT))
        }
    }
}

/// Whether a failed handshake step got as far as the server's logic: an answer other than
/// a refusal of our credentials. Anything short of that is "could not connect".
fn reached_server(e: &TransportError) -> bool {
    match e.kind() {
        TransportKind::Status { status, .. } => !matches!(status.as_u16(), 401 | 403),
        _ => e.delivery() == Delivery::Answered,
    }
}

/// A failure once `tools/call` may have been sent. `unknown_outcome` is true unless the
/// transport is certain the request never left.
pub(crate) fn during_call(target: &Target, error: StepError) -> ToolFailure {
    match error {
        StepError::Transport(e) => {
            let message = safe(target, &e.to_string(), MESSAGE_LIMIT);
            if e.delivery() == Delivery::NotSent {
                return ToolFailure::before_send(ErrorKind::ConnectFailed, message);
            }
            // A refusal of our credentials comes before the server looks at the call: the
            // tool did not run (a token revoked after the era was learned, for example).
            if let TransportKind::Status { status, .. } = e.kind()
                && matches!(status.as_u16(), 401 | 403)
            {
                return ToolFailure::before_send(
                    ErrorKind::ConnectFailed,
                    format!(
                        "the server refused the credentials, so the tool did not run: {message}"
                    ),
                );
            }
            let kind = match e.kind() {
                TransportKind::BodyTooLarge { .. } => ErrorKind::OutputTooLarge,
                TransportKind::Status { rpc: Some(_), .. } => ErrorKind::RpcError,
                TransportKind::Io | TransportKind::StreamEnded | TransportKind::Timeout => {
                    ErrorKind::ConnectionLost
                }
                _ => ErrorKind::ProtocolError,
            };
            ToolFailure::after_send(kind, message)
        }
        StepError::Rpc { error, status } => ToolFailure::after_send(
            ErrorKind::RpcError,
            format!(
                "the server answered with {}",
                rpc_text(target, &error, status)
            ),
        ),
        // A 404 to the call in its session: the session (and maybe the call) is gone.
        StepError::SessionExpired => ToolFailure::after_send(
            ErrorKind::ConnectionLost,
            "the server ended the session during the call (404 with a session id)",
        ),
        StepError::Protocol(m) | StepError::Refused(m) | StepError::Unreachable(m) => {
            ToolFailure::after_send(ErrorKind::ProtocolError, safe(target, &m, MESSAGE_LIMIT))
        }
        StepError::UserInput(m) => ToolFailure::after_send(
            ErrorKind::UserInputRequired,
            safe(target, &m, MESSAGE_LIMIT),
        ),
        StepError::Unsupported(m) => ToolFailure::after_send(
            ErrorKind::UnsupportedContent,
            safe(target, &m, MESSAGE_LIMIT),
        ),
    }
}

/// `error CODE: MESSAGE` (and `(data: DATA)` when the server sent data), each of the
/// server's strings redacted (data on its decoded strings, so escapes cannot hide the
/// token) and cut to [`FRAGMENT_LIMIT`] bytes.
pub(crate) fn rpc_text(target: &Target, error: &RpcError, status: Option<u16>) -> String {
    let mut text = format!(
        "error {}: {}",
        error.code.0,
        safe(target, &error.message, FRAGMENT_LIMIT)
    );
    if let Some(status) = status {
        text.push_str(&format!(" (HTTP {status})"));
    }
    if let Some(data) = &error.data {
        let data = target
            .secrets
            .redact_json(data)
            .map_or_else(|| "(withheld)".to_owned(), |d| d.get().to_owned());
        text.push_str(&format!(" (data: {})", safe(target, &data, FRAGMENT_LIMIT)));
    }
    text
}

/// `text` without the token, then cut to `max` bytes.
pub(crate) fn safe(target: &Target, text: &str, max: usize) -> String {
    cut(&target.redact(text), max).into_owned()
}
