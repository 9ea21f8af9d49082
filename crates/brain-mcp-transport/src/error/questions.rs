//! What a caller may ask a [`TransportError`]: which kind of failure it is, one question
//! per kind, and the details a kind carries. The kind itself stays private, as in
//! hyper-util and reqwest, so the transport can add kinds and details without breaking
//! anyone. With [`TransportError::delivery`] the answers say all a caller acts on.

use std::time::Duration;

use brain_mcp_proto::client::RpcError;
use http::StatusCode;

use super::{ErrorKind, TransportError};

impl TransportError {
    fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// A short, stable name of the kind of failure, for log fields and metric labels:
    /// `invalid_request`, `connect`, `tls`, `timeout`, `io`, `body_too_large`, `status`,
    /// `unexpected_reply`, `stream_ended`, `invalid_session_id`, `redirect`,
    /// `destination`. Branch on the `is_*` questions, not on this name.
    pub fn kind_name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// Whether the URL or a header value could not be used. Nothing was sent.
    pub fn is_invalid_request(&self) -> bool {
        matches!(self.kind(), ErrorKind::InvalidRequest)
    }

    /// Whether DNS resolution or the TCP connect failed, or a proxy refused the
    /// connection ([`proxy_status`](Self::proxy_status) then says how).
    pub fn is_connect(&self) -> bool {
        matches!(self.kind(), ErrorKind::Connect)
    }

    /// Whether the TLS handshake failed (for example an untrusted certificate).
    pub fn is_tls(&self) -> bool {
        matches!(self.kind(), ErrorKind::Tls)
    }

    /// Whether a deadline inside the transport passed (connecting, a fetch's deadline).
    /// The caller's own deadlines show as a dropped future instead.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind(), ErrorKind::Timeout)
    }

    /// Whether the connection failed while sending or receiving (or a child's pipes
    /// did).
    pub fn is_io(&self) -> bool {
        matches!(self.kind(), ErrorKind::Io)
    }

    /// Whether the server sent more bytes than the exchange's budget, or an SSE event
    /// (a child's line) over the per-message limit; [`body_limit`](Self::body_limit)
    /// says which limit.
    pub fn is_body_too_large(&self) -> bool {
        matches!(self.kind(), ErrorKind::BodyTooLarge { .. })
    }

    /// The limit in bytes that a body-too-large error went over; `None` for any other
    /// kind.
    pub fn body_limit(&self) -> Option<usize> {
        match self.kind() {
            ErrorKind::BodyTooLarge { limit } => Some(*limit),
            _ => None,
        }
    }

    /// Whether the server answered with an error status; [`status`](Self::status),
    /// [`rpc_error`](Self::rpc_error), [`www_authenticate`](Self::www_authenticate) and
    /// [`retry_after`](Self::retry_after) tell what came with it.
    pub fn is_status(&self) -> bool {
        matches!(self.kind(), ErrorKind::Status { .. })
    }

    /// The error status the server answered with; `None` unless
    /// [`is_status`](Self::is_status). (A proxy's refusal is
    /// [`proxy_status`](Self::proxy_status).)
    pub fn status(&self) -> Option<StatusCode> {
        match self.kind() {
            ErrorKind::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The JSON-RPC error the body of an error status held, read as the client core
    /// reads one in a `2xx` reply, its strings free of the exchange's secrets.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self.kind() {
            ErrorKind::Status { rpc, .. } => rpc.as_ref(),
            _ => None,
        }
    }

    /// The `WWW-Authenticate` challenge of a 401 or 403 answer, free of the exchange's
    /// secrets.
    pub fn www_authenticate(&self) -> Option<&str> {
        match self.kind() {
            ErrorKind::Status {
                www_authenticate, ..
            } => www_authenticate.as_deref(),
            _ => None,
        }
    }

    /// The `DPoP-Nonce` of a 401 answer (RFC 9449 §9): the nonce the server wants in the
    /// next proof.
    pub fn dpop_nonce(&self) -> Option<&str> {
        match self.kind() {
            ErrorKind::Status { dpop_nonce, .. } => dpop_nonce.as_deref(),
            _ => None,
        }
    }

    /// The `Retry-After` of an error status, when the server gave it in seconds.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.kind() {
            ErrorKind::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the server's reply does not fit the exchange: `202` to a request, a JSON
    /// body that is not our response, an unknown content type, malformed JSON.
    pub fn is_unexpected_reply(&self) -> bool {
        matches!(self.kind(), ErrorKind::UnexpectedReply)
    }

    /// Whether the reply stream (or the child) ended before our response arrived, and
    /// resuming was not allowed, not possible, or used up.
    pub fn is_stream_ended(&self) -> bool {
        matches!(self.kind(), ErrorKind::StreamEnded)
    }

    /// Whether the `Mcp-Session-Id` response header was repeated, comma-joined or not
    /// visible ASCII.
    pub fn is_invalid_session_id(&self) -> bool {
        matches!(self.kind(), ErrorKind::InvalidSessionId)
    }

    /// Whether the server redirected in a way this client does not follow (anything but
    /// a same-origin 307 or 308), or too many times.
    pub fn is_redirect(&self) -> bool {
        matches!(self.kind(), ErrorKind::Redirect)
    }

    /// Whether a URL a peer named reaches only addresses the destination rule refuses
    /// for this server; the message names the rule and the address class. Nothing was
    /// sent.
    pub fn is_destination(&self) -> bool {
        matches!(self.kind(), ErrorKind::Destination)
    }
}
