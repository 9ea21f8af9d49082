//! Why a host could not be built or a server added.

use brain_mcp_transport::Delivery;

use crate::discover::DiscoverError;

/// Why a host could not be built or a server added: the kind of failure, whether a
/// request may have reached the server, and a message (never a secret). `Display` is
/// the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    kind: HostErrorKind,
    delivery: Delivery,
    message: String,
}

/// What kind of failure a [`HostError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostErrorKind {
    /// The HTTP client could not be built (TLS roots, settings).
    Client,
    /// What the application asked for is unusable (a name taken, a binding that does
    /// not load, no tool named).
    Invalid,
    /// Tools named that the server does not offer.
    Missing,
    /// The server could not be started or its tools read.
    Server,
}

impl HostError {
    pub(crate) fn new(kind: HostErrorKind, message: String) -> Self {
        let delivery = match kind {
            HostErrorKind::Missing => Delivery::Answered,
            _ => Delivery::NotSent,
        };
        Self {
            kind,
            delivery,
            message,
        }
    }

    /// A server whose tools could not be read, named `server`.
    pub(super) fn listing(server: &str, e: &DiscoverError) -> Self {
        Self {
            kind: HostErrorKind::Server,
            delivery: e.delivery(),
            message: format!("server {server:?}: {e}"),
        }
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> HostErrorKind {
        self.kind
    }

    /// Whether a request may have reached the server.
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HostError {}
