//! Mapping what went wrong to Brain's failure kinds and `unknown_outcome`.

use brain_mcp_transport::{Delivery, ErrorKind as Wire, TransportError};
use brain_tools_core::{ErrorKind, ToolFailure};

use crate::exchange::StepError;

/// A failure before `tools/call` was sent: probing the era or opening the session.
/// `unknown_outcome` is false: the tool was never invoked.
pub(crate) fn before_call(error: StepError) -> ToolFailure {
    match error {
        StepError::Transport(e) => {
            let kind = if reached_server(&e) {
                ErrorKind::HandshakeFailed
            } else {
                ErrorKind::ConnectFailed
            };
            ToolFailure::before_send(kind, e.to_string())
        }
        StepError::Rpc { code, message, .. } => ToolFailure::before_send(
            ErrorKind::HandshakeFailed,
            format!(
                "the server refused the handshake: error {}: {message}",
                code.0
            ),
        ),
        StepError::Refused(m) => ToolFailure::before_send(ErrorKind::ConnectFailed, m),
        StepError::Protocol(m) | StepError::UserInput(m) | StepError::Unsupported(m) => {
            ToolFailure::before_send(ErrorKind::HandshakeFailed, m)
        }
    }
}

/// Whether a failed handshake step got as far as the server's logic: an answer other than
/// a refusal of our credentials. Anything short of that is "could not connect".
fn reached_server(e: &TransportError) -> bool {
    match e.kind() {
        Wire::Status { status, .. } => !matches!(status.as_u16(), 401 | 403),
        _ => e.delivery() == Delivery::Answered,
    }
}

/// A failure once `tools/call` may have been sent. `unknown_outcome` is true unless the
/// transport is certain the request never left.
pub(crate) fn during_call(error: StepError) -> ToolFailure {
    match error {
        StepError::Transport(e) => {
            if e.delivery() == Delivery::NotSent {
                return ToolFailure::before_send(ErrorKind::ConnectFailed, e.to_string());
            }
            // A refusal of our credentials comes before the server looks at the call: the
            // tool did not run (a token revoked after the era was learned, for example).
            if let Wire::Status { status, .. } = e.kind()
                && matches!(status.as_u16(), 401 | 403)
            {
                return ToolFailure::before_send(
                    ErrorKind::ConnectFailed,
                    format!("the server refused the credentials, so the tool did not run: {e}"),
                );
            }
            let kind = match e.kind() {
                Wire::BodyTooLarge { .. } => ErrorKind::OutputTooLarge,
                Wire::Status { rpc: Some(_), .. } => ErrorKind::RpcError,
                Wire::Io | Wire::StreamEnded | Wire::Timeout | Wire::SessionExpired => {
                    ErrorKind::ConnectionLost
                }
                _ => ErrorKind::ProtocolError,
            };
            ToolFailure::after_send(kind, e.to_string())
        }
        StepError::Rpc { code, message, .. } => ToolFailure::after_send(
            ErrorKind::RpcError,
            format!("the server answered with error {}: {message}", code.0),
        ),
        StepError::Protocol(m) | StepError::Refused(m) => {
            ToolFailure::after_send(ErrorKind::ProtocolError, m)
        }
        StepError::UserInput(m) => ToolFailure::after_send(ErrorKind::UserInputRequired, m),
        StepError::Unsupported(m) => ToolFailure::after_send(ErrorKind::UnsupportedContent, m),
    }
}
