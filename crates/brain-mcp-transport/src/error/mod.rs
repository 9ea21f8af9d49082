//! Transport errors, each carrying what is known about delivery.

use std::error::Error as StdError;
use std::fmt;

use brain_mcp_proto::text::{self, Secrets};
use http::StatusCode;

pub(crate) use kind::ErrorKind;

mod kind;
mod questions;

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

    pub(crate) fn with_proxy_status(mut self, status: Option<StatusCode>) -> Self {
        self.0.proxy_status = status;
        self
    }

    /// The status a proxy refused the connection with: its answer to `CONNECT` (an
    /// `https` destination), or a `407` to a request it was to forward (`http`). The
    /// error then answers [`is_connect`](Self::is_connect) and the request was not sent.
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
            dpop_nonce,
            ..
        } = &mut self.0.kind
        {
            // A nonce that holds a secret is dropped, not shown redacted: it is sent back.
            if dpop_nonce
                .as_deref()
                .is_some_and(|n| matches!(secrets.redact(n), std::borrow::Cow::Owned(_)))
            {
                *dpop_nonce = None;
            }
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
mod tests;
