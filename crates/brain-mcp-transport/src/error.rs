//! Transport errors, each carrying what is known about delivery.

use std::error::Error as StdError;
use std::fmt;

use std::time::Duration;

use brain_mcp_proto::client::RpcError;
use brain_mcp_proto::text::{self, Secrets};
use http::StatusCode;

/// The most bytes of a [`TransportError`]'s message; a server's words in it (an error
/// message, a content type, a redirect's host) are cut to fit.
pub const MESSAGE_LIMIT: usize = 2048;

/// What the caller may assume about the request when an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: a request never left, may have arrived, or was answered
pub enum Delivery {
    /// The request certainly did not reach the server (DNS, TCP or TLS failure, an
    /// invalid request, a refused redirect, or hyper handed the request back unsent).
    /// Resending it is safe.
    NotSent,
    /// The request may have reached the server, and the server may have acted on it,
    /// but no definite answer came back (the connection broke, the body was too large,
    /// the stream ended early).
    MaybeSent,
    /// The server gave a definite answer that is not a success: an error status, or
    /// a reply this transport rejects (for example `202` to a request).
    Answered,
}

/// The classification of a [`TransportError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
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
    /// The server wants a token and none could be had: the message names the step
    /// (metadata, issuer, token endpoint, scope). The server acted on nothing.
    Authorization,
    /// A URL a peer named reaches only addresses the destination rule refuses for this
    /// server (`brain_mcp_proto::auth::reach`); the message names the rule and the
    /// address class. Nothing was sent.
    Destination,
}

impl ErrorKind {
    /// A short name for logs: `connect`, `tls`, `status`, `body_too_large`, ...
    pub fn as_str(&self) -> &'static str {
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
            Self::Authorization => "authorization",
            Self::Destination => "destination",
        }
    }
}

/// An error from an HTTP or stdio exchange.
///
/// The message says what went wrong and where (the URL's origin, never its query, and
/// never a header value: no bearer token or session id can leak through it).
pub struct TransportError(Box<Inner>);

/// Boxed: errors are rare, and a small `Result` keeps the happy path cheap.
struct Inner {
    kind: ErrorKind,
    delivery: Delivery,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
    /// The status a proxy refused the connection with.
    proxy_status: Option<StatusCode>,
}

impl TransportError {
    pub(crate) fn new(kind: ErrorKind, delivery: Delivery, message: impl Into<String>) -> Self {
        Self(Box::new(Inner {
            kind,
            delivery,
            message: message.into(),
            source: None,
            proxy_status: None,
        }))
    }

    /// A request that could not be authorized ([`ErrorKind::Authorization`]): the
    /// server was refused nothing it acted on. `message` must hold no secret.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Authorization, Delivery::NotSent, message)
    }

    pub(crate) fn with_proxy_status(mut self, status: Option<StatusCode>) -> Self {
        self.0.proxy_status = status;
        self
    }

    /// The status a proxy refused the connection with: its answer to `CONNECT` (an
    /// `https` destination), or a `407` to a request it was to forward (`http`). The
    /// error is then a [`ErrorKind::Connect`] and the request was not sent.
    pub fn proxy_status(&self) -> Option<StatusCode> {
        self.0.proxy_status
    }

    pub(crate) fn with_source(
        mut self,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        self.0.source = Some(source.into());
        self
    }

    /// What the caller may assume about the request.
    pub fn delivery(&self) -> Delivery {
        self.0.delivery
    }

    /// The error's classification.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The human-readable message (also shown by `Display`).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// This error as it leaves an exchange: every secret of the exchange (the bearer
    /// token, proxy credentials, the caller's [`Secrets`]) removed from every string the
    /// server or a proxy could have put in it (the message, a JSON-RPC error message and
    /// data, a `WWW-Authenticate` challenge), then the message cut to [`MESSAGE_LIMIT`]
    /// bytes. Every error leaving an exchange passes through here, so a peer that reflects
    /// a secret cannot make it appear in a message, a log line or `Debug` output, and
    /// cannot make a message huge. (Redacting comes first: a cut must not leave part of a
    /// secret behind.)
    pub(crate) fn finished(mut self, secrets: &Secrets) -> Self {
        let scrub = |s: &mut String| {
            if let std::borrow::Cow::Owned(clean) = secrets.redact(s) {
                *s = clean;
            }
        };
        // The source chain (hyper, h2, io) can carry the server's words too (an h2
        // GOAWAY's debug data, say): it becomes part of the message, which is redacted
        // and bounded like the rest, and is not kept as a live source.
        let mut message = std::mem::take(&mut self.0.message);
        if let Some(source) = self.0.source.take() {
            let mut cur: Option<&(dyn StdError + 'static)> = Some(&*source);
            while let Some(e) = cur {
                message.push_str(": ");
                message.push_str(&e.to_string());
                // A transport error's own `Display` already shows its chain.
                cur = if e.is::<Self>() { None } else { e.source() };
            }
        }
        scrub(&mut message);
        self.0.message = match text::cut(&message, MESSAGE_LIMIT) {
            std::borrow::Cow::Owned(short) => short,
            std::borrow::Cow::Borrowed(_) => message,
        };
        if let ErrorKind::Status {
            rpc,
            www_authenticate,
            ..
        } = &mut self.0.kind
        {
            if let Some(error) = rpc {
                scrub(&mut error.message);
                if let Some(data) = &error.data {
                    error.data = secrets.redact_json(data);
                }
            }
            if let Some(challenge) = www_authenticate {
                scrub(challenge);
            }
        }
        self
    }
}

impl fmt::Debug for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportError")
            .field("kind", &self.0.kind)
            .field("delivery", &self.0.delivery)
            .field("message", &self.0.message)
            .field("source", &self.0.source)
            .field("proxy_status", &self.0.proxy_status)
            .finish()
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(src) = &self.0.source {
            write!(f, ": {src}")?;
            let mut next = src.source();
            while let Some(inner) = next {
                write!(f, ": {inner}")?;
                next = inner.source();
            }
        }
        Ok(())
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// Finds the first error of type `T` in a source chain. `io::Error` hides its inner
/// error from `source()` (it returns the inner error's source), so look inside it.
pub(crate) fn find_source<'a, T: StdError + 'static>(
    err: &'a (dyn StdError + 'static),
) -> Option<&'a T> {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        cur = match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's words can sit deep in a source chain (an h2 GOAWAY's debug data inside
    /// hyper's error): they end up in the message, redacted and bounded, and no live source
    /// keeps them.
    #[test]
    fn the_source_chain_is_redacted_and_bounded() {
        let inner = std::io::Error::other(format!(
            "GoAway(b\"you sent Bearer s3cret-tok {}\")",
            "x".repeat(10_000)
        ));
        let outer = std::io::Error::other(inner);
        let err = TransportError::new(
            ErrorKind::Io,
            Delivery::MaybeSent,
            "POST http://h:1: the connection failed",
        )
        .with_source(outer)
        .finished(&Secrets::new(["s3cret-tok"]));
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("s3cret-tok"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert!(err.message().len() <= MESSAGE_LIMIT);
        assert!(StdError::source(&err).is_none());
    }
}
