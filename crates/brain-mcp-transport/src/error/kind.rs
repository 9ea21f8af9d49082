//! The classification a [`TransportError`](super::TransportError) keeps to itself; callers
//! ask it questions instead (`is_status`, `body_limit`, ...), so a new kind or a new
//! detail breaks no one.

use std::time::Duration;

use brain_mcp_proto::client::RpcError;
use http::StatusCode;

/// What kind of failure a transport error is, with the details some kinds carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The URL or a header value could not be used; nothing was sent.
    InvalidRequest,
    /// DNS resolution or the TCP connect failed (or timed out).
    Connect,
    /// The TLS handshake failed (for example an untrusted certificate).
    Tls,
    /// A deadline inside the transport passed (the caller's own deadlines surface as
    /// a dropped future instead).
    Timeout,
    /// The connection failed while sending or receiving.
    Io,
    /// The server sent more bytes than the exchange's budget (or an SSE event larger
    /// than the per-event limit).
    BodyTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
    /// The server answered with an error status.
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// The JSON-RPC error found in the body (read as the client core reads one in a
        /// `2xx` reply).
        rpc: Option<RpcError>,
        /// The `WWW-Authenticate` value of a 401 or 403 reply.
        www_authenticate: Option<String>,
        /// The `DPoP-Nonce` value of a 401 reply (RFC 9449 §9), if any.
        dpop_nonce: Option<String>,
        /// `Retry-After`, when given in seconds.
        retry_after: Option<Duration>,
    },
    /// The server's reply does not fit the exchange: `202` to a request, a JSON body
    /// that is not our response, an unknown content type, malformed JSON.
    UnexpectedReply,
    /// The reply stream ended before our response arrived (and resuming was not
    /// allowed, not possible, or exhausted).
    StreamEnded,
    /// The `Mcp-Session-Id` response header is repeated, comma-joined or not visible
    /// ASCII.
    InvalidSessionId,
    /// A redirect that is not a same-origin 307/308, or too many hops.
    Redirect,
    /// A URL a peer named reaches only addresses the destination rule refuses for this
    /// server (`brain_mcp_proto::auth::reach`); the message names the rule and the
    /// address class. Nothing was sent.
    Destination,
}

impl ErrorKind {
    /// A short name for logs and metric labels: `connect`, `tls`, `status`,
    /// `body_too_large`, ... These names are telemetry: keep them stable.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::Io => "io",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::Status { .. } => "status",
            Self::UnexpectedReply => "unexpected_reply",
            Self::StreamEnded => "stream_ended",
            Self::InvalidSessionId => "invalid_session_id",
            Self::Redirect => "redirect",
            Self::Destination => "destination",
        }
    }
}
