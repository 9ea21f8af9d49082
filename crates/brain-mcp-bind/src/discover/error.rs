//! Why discovery failed, sorted by whose fault it was and whether anything reached the
//! server.

use std::fmt;

use brain_mcp_proto::client::CallError;
use brain_mcp_transport::Delivery;

use crate::driver::{Blame, Cause, DriverError, rpc_text};

/// Why discovery failed: the kind of failure, whether a request may have reached the
/// server, and a message that names the problem (and the step, for the server's failures;
/// never a secret). `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoverError {
    kind: DiscoverErrorKind,
    delivery: Delivery,
    message: String,
    names: Vec<String>,
}

/// What kind of failure a [`DiscoverError`] is, grouped by who is to blame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoverErrorKind {
    /// The request itself is unusable (names, URL, token variable); nothing was sent.
    Invalid,
    /// The server could not be reached, gave no definite answer, or cannot be reached
    /// as configured (a proxy that refuses, a redirect refused at the era probe, a
    /// program that does not start).
    Unreachable,
    /// The server refused the credentials (401 or 403), or no OAuth token could be had.
    Refused,
    /// The server answered, but with an error or not as the protocol says.
    Server,
    /// Named tools the server does not offer ([`DiscoverError::names`]; the message
    /// suggests close names).
    Missing,
    /// Tools whose definitions would not load as Brain bindings
    /// ([`DiscoverError::names`]; the message gives the loader's reasons).
    Unloadable,
    /// The whole discovery took longer than its deadline.
    Timeout,
}

impl DiscoverError {
    pub(crate) fn new(kind: DiscoverErrorKind, delivery: Delivery, message: String) -> Self {
        Self {
            kind,
            delivery,
            message,
            names: Vec::new(),
        }
    }

    /// A failure naming tools (missing or unloadable).
    pub(crate) fn naming(kind: DiscoverErrorKind, names: Vec<String>, message: String) -> Self {
        Self {
            names,
            ..Self::new(kind, Delivery::Answered, message)
        }
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> DiscoverErrorKind {
        self.kind
    }

    /// Whether a request may have reached the server (discovery sends nothing with side
    /// effects; this says how far it got).
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The tools named by a [`DiscoverErrorKind::Missing`] or
    /// [`DiscoverErrorKind::Unloadable`] failure; empty otherwise.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A failure of the driver, as discovery reports it: its kind from the driver's blame
    /// (as a call's kind is), the step named, the server's words made safe with `secrets`.
    pub(crate) fn from_driver(e: &DriverError, secrets: &brain_mcp_transport::Secrets) -> Self {
        use DiscoverErrorKind::{Refused, Server as ServerKind, Unreachable};
        let kind = match e.blame() {
            Blame::Unreachable => Unreachable,
            Blame::Credentials => Refused,
            Blame::Server => ServerKind,
        };
        let step = e.step_name();
        let text = e.message(secrets);
        let message = match (&e.cause, kind) {
            (Cause::Core(CallError::SessionExpired), _) => {
                format!("{step}: the server ended the session")
            }
            (Cause::Core(CallError::Rpc { error, .. }), _) => format!(
                "{step}: the server answered with {}",
                rpc_text(secrets, error, e.status)
            ),
            (_, Unreachable) if e.delivery() == Delivery::MaybeSent => {
                format!("{step}: the exchange with the server failed: {text}")
            }
            (_, Unreachable) => format!("{step}: could not reach the server: {text}"),
            (Cause::Link(t), ServerKind) if t.is_status() => {
                format!("{step}: the server failed: {text}")
            }
            (Cause::Link(_), ServerKind) => {
                format!("{step}: the exchange with the server failed: {text}")
            }
            _ => format!("{step}: {text}"),
        };
        Self::new(kind, e.delivery(), message)
    }
}

impl fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DiscoverError {}

pub(super) fn invalid<T>(message: impl Into<String>) -> Result<T, DiscoverError> {
    Err(DiscoverError::new(
        DiscoverErrorKind::Invalid,
        Delivery::NotSent,
        message.into(),
    ))
}
