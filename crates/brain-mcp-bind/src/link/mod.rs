//! One link to a server, whatever carries it: send a message, read the replies to it, each
//! decoded once by the transport. The drivers (`crate::driver`) are written once over it;
//! this module is the only code in the binding that knows HTTP from a child process.
//!
//! - [`Link::Http`]: Streamable HTTP through the transport's pooled client ([`http`]).
//! - [`Link::Child`]: a child process's stdin and stdout (the transport's
//!   [`ChildLink`]), serving one session or, in the 2026 era, every call at once.
//!
//! Either way a failure is the transport's [`TransportError`], which says whether the
//! message may have reached the server; a request can also fail for want of a token
//! ([`LinkError::Authorization`], the binding's own: nothing was sent).

mod error;
mod http;

use std::sync::Arc;

use brain_mcp_proto::client::era::ProbeAnswer;
use brain_mcp_proto::client::{Carrier, Framing, Outgoing};
use brain_mcp_transport::stdio::{ChildLink, Inbox};
use brain_mcp_transport::{Delivery, Received, ReplyStream, Secrets, TransportError};

pub(crate) use error::LinkError;
pub(crate) use http::HttpLink;

use crate::observe::{self, Peer};

/// A link to one server.
#[derive(Clone, Debug)]
pub(crate) enum Link {
    /// Streamable HTTP.
    Http(HttpLink),
    /// A child process.
    Child(Arc<ChildLink>),
}

/// How ending a session went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The session is over (a session without an id has nothing to `DELETE`).
    Closed,
    /// The server's answer to its `DELETE` says it may live on: the status, or `None`
    /// when none came.
    Failed(Option<u16>),
}

/// The replies to one request, in order, ending at its response.
#[derive(Debug)]
pub(crate) enum Replies {
    Http(ReplyStream),
    Child(Inbox),
}

impl Link {
    /// Every secret of the requests this link carries, to remove from what comes back.
    pub(crate) fn secrets(&self) -> Secrets {
        match self {
            Self::Http(http) => http.target().secrets_now(),
            Self::Child(_) => Secrets::none(),
        }
    }

    /// Where this link's messages go, as telemetry names it.
    pub(crate) fn peer(&self) -> &Peer {
        match self {
            Self::Http(http) => http.peer(),
            Self::Child(_) => &observe::PIPE,
        }
    }

    /// What carries this link's calls, for the core's per-carrier rules.
    pub(crate) fn carrier(&self) -> Carrier {
        match self {
            Self::Http(_) => Carrier::Http,
            Self::Child(child) if child.is_shared() => Carrier::SharedProcess,
            Self::Child(_) => Carrier::Process,
        }
    }

    /// Sends request `out` and returns its replies; the response may take `budget` bytes,
    /// every other message the transport's per-message limit. Over HTTP, a server that
    /// wants a token and cannot have one fails it as [`LinkError::Authorization`].
    pub(crate) async fn request(&self, out: Outgoing, budget: usize) -> Result<Replies, LinkError> {
        match self {
            Self::Http(http) => http.request(out, budget).await.map(Replies::Http),
            Self::Child(child) => Ok(Replies::Child(child.request(out, budget).await?)),
        }
    }

    /// Sends a message that expects no reply and waits for the link to take it
    /// (`notifications/initialized`, which a session needs before anything else).
    pub(crate) async fn send(&self, out: Outgoing) -> Result<(), TransportError> {
        match self {
            Self::Http(http) => http.send(out).await,
            Self::Child(child) => child.send(&out.body).await,
        }
    }

    /// Sends a message that expects no reply (a cancel, an answer to a server request),
    /// best effort and bounded: the server's own timeouts cover a lost one.
    pub(crate) async fn notify(&self, out: Outgoing) {
        match self {
            Self::Http(http) => http.notify(out).await,
            Self::Child(child) => child.notify(&out.body).await,
        }
    }

    /// Ends the session `framing` holds on this link: its `DELETE` over HTTP (when the
    /// server gave a session id), the child itself over stdio (a handshake-era session
    /// is a process).
    pub(crate) async fn end(&self, framing: &Framing) -> Ended {
        match self {
            Self::Http(http) => http.end(framing).await,
            Self::Child(child) => {
                child.close().await;
                Ended::Closed
            }
        }
    }

    /// A failure to carry the era probe or its answer, as an answer for the core's
    /// verdict. Over a child, every failure is a child that ended before answering.
    pub(crate) fn probe_answer<'a>(&self, e: &'a TransportError) -> ProbeAnswer<'a> {
        match self {
            Self::Child(_) => ProbeAnswer::Ended,
            Self::Http(_) => http_probe_answer(e),
        }
    }
}

impl Replies {
    /// The next message; `None` once the reply ended (after the response).
    pub(crate) async fn next(&mut self) -> Option<Result<Received, TransportError>> {
        match self {
            Self::Http(stream) => stream.next().await,
            Self::Child(inbox) => Some(inbox.next().await),
        }
    }

    /// The session id the reply carried (the answer to `initialize` over HTTP).
    pub(crate) fn session_id(&self) -> Option<&str> {
        match self {
            Self::Http(stream) => stream.session_id(),
            Self::Child(_) => None,
        }
    }
}

fn http_probe_answer(e: &TransportError) -> ProbeAnswer<'_> {
    if let Some(status) = e.status() {
        return ProbeAnswer::Status {
            status: status.as_u16(),
            rpc: e.rpc_error(),
            challenge: e.www_authenticate(),
            retry_after: e.retry_after(),
        };
    }
    let refused_by_proxy =
        e.is_connect() && matches!(e.proxy_status().map(|s| s.as_u16()), Some(403 | 407));
    if e.is_unexpected_reply() || e.is_invalid_session_id() {
        // A reply that is no answer at all: a server that does not know the method.
        ProbeAnswer::NotAnAnswer
    } else if e.is_redirect() || e.is_invalid_request() || refused_by_proxy {
        // A redirect we refuse, a request we cannot build, a proxy that refuses us for
        // who we are (407, 403): nothing changes by retrying.
        ProbeAnswer::Unusable
    } else if e.delivery() == Delivery::Answered {
        ProbeAnswer::NotAnAnswer
    } else {
        ProbeAnswer::NoAnswer
    }
}
