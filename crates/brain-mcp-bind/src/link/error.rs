//! Why a link could not carry a request: the transport failed, or the binding could get
//! no token for a server that wants one. Authorization is the binding's business, not
//! the transport's, so its failure is the binding's own error.

use brain_mcp_transport::TransportError;

use crate::auth::AuthFailure;

/// A request a link could not carry.
#[derive(Debug)]
pub(crate) enum LinkError {
    /// The transport failed; it says whether the message may have reached the server.
    Transport(TransportError),
    /// No token could be had (or the server refused every one it was given): the request
    /// was not sent, or only as far as a refusal for its token, so the tool did not run.
    Authorization(AuthFailure),
}

impl LinkError {
    /// The transport's failure, when it is one.
    pub(crate) fn transport(&self) -> Option<&TransportError> {
        match self {
            Self::Transport(e) => Some(e),
            Self::Authorization(_) => None,
        }
    }
}

impl From<TransportError> for LinkError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}
