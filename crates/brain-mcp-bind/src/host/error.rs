//! Why a host could not be built or a server added.

use brain_mcp_transport::Delivery;

use crate::discover::{DiscoverError, DiscoverErrorKind};

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
    /// The server answered its listing with an error, or not as the protocol says (or
    /// its program ran but its session could not be opened).
    Server,
    /// The server could not be reached (or its program started), gave no definite
    /// answer, or cannot be reached as configured: the same failures a call reports as
    /// `connect_failed`.
    Unreachable,
    /// The server refused the credentials, or none could be had (the credential source
    /// gave the tenant none): the same failures a call reports as
    /// `authorization_failed`.
    Refused,
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

    /// A server whose tools could not be read, named `server`: discovery's kind (itself
    /// the driver's blame) carried over.
    pub(super) fn listing(server: &str, e: &DiscoverError) -> Self {
        let kind = match e.kind() {
            DiscoverErrorKind::Unreachable | DiscoverErrorKind::Timeout => {
                HostErrorKind::Unreachable
            }
            DiscoverErrorKind::Refused => HostErrorKind::Refused,
            DiscoverErrorKind::Missing => HostErrorKind::Missing,
            DiscoverErrorKind::Invalid | DiscoverErrorKind::Unloadable => HostErrorKind::Invalid,
            _ => HostErrorKind::Server,
        };
        Self {
            kind,
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

#[cfg(test)]
mod tests {
    use brain_mcp_proto::client::{CallError, Violation};
    use brain_mcp_transport::Secrets;
    use brain_tools_core::ErrorKind;

    use super::*;
    use crate::auth::AuthFailure;
    use crate::driver::{Blame, Cause, DriverError, NoEra, StartError, StartFailure, Step};
    use crate::link::LinkError;

    fn unauthorized(status: u16) -> Cause {
        Cause::Core(CallError::Unauthorized {
            status,
            challenge: None,
        })
    }

    #[test]
    fn one_failure_reads_the_same_in_a_call_discovery_and_the_host() {
        use DiscoverErrorKind as D;
        use HostErrorKind as H;
        let start = |started| {
            Cause::Start(if started {
                StartFailure::Silent {
                    stderr: String::new(),
                }
            } else {
                StartFailure::NotStarted(StartError::Spawn("no such program".into()))
            })
        };
        let cases = [
            (
                Step::Call,
                unauthorized(401),
                ErrorKind::AuthorizationFailed,
                D::Refused,
                H::Refused,
            ),
            (
                Step::Probe,
                unauthorized(403),
                ErrorKind::AuthorizationFailed,
                D::Refused,
                H::Refused,
            ),
            (
                Step::Handshake,
                Cause::Authorization(AuthFailure::config("no token could be had")),
                ErrorKind::AuthorizationFailed,
                D::Refused,
                H::Refused,
            ),
            (
                Step::Probe,
                Cause::Unreachable {
                    last: NoEra::Status(503),
                    attempts: 4,
                },
                ErrorKind::ConnectFailed,
                D::Unreachable,
                H::Unreachable,
            ),
            (
                Step::Handshake,
                start(false),
                ErrorKind::ConnectFailed,
                D::Unreachable,
                H::Unreachable,
            ),
            (
                Step::Handshake,
                start(true),
                ErrorKind::HandshakeFailed,
                D::Server,
                H::Server,
            ),
            (
                Step::List(1),
                Cause::Core(CallError::Protocol(Violation::InvalidToolList(
                    "not a listing".into(),
                ))),
                ErrorKind::HandshakeFailed,
                D::Server,
                H::Server,
            ),
        ];
        let secrets = Secrets::none();
        for (step, cause, call, discovery, host) in cases {
            let e = DriverError::new(step, cause);
            let what = format!("{e:?}");
            assert_eq!(e.to_failure(&secrets).kind, call, "{what}");
            let listed = DiscoverError::from_driver(&e, &secrets);
            assert_eq!(listed.kind(), discovery, "{what}");
            let added = HostError::listing("s", &listed);
            assert_eq!(added.kind(), host, "{what}");
            assert_eq!(added.delivery(), e.delivery(), "{what}");
        }
    }

    /// A request the binding could not authorize is its own failure, not the transport's:
    /// it reads as a refusal of the credentials, sent nothing, and its message is the
    /// authorization failure's, whatever step it stopped.
    #[test]
    fn a_request_that_could_not_be_authorized_sent_nothing_and_says_why() {
        let secrets = Secrets::none();
        for step in [Step::Probe, Step::Handshake, Step::List(1), Step::Call] {
            let failure = AuthFailure::server("authorization metadata: no document found");
            let e = DriverError::from_link(step, LinkError::Authorization(failure), |_, _, _| None);
            assert!(matches!(e.cause, Cause::Authorization(_)), "{e:?}");
            assert_eq!(e.blame(), Blame::Credentials);
            assert_eq!(e.delivery(), Delivery::NotSent);
            let out = e.to_failure(&secrets);
            assert_eq!(out.kind, ErrorKind::AuthorizationFailed);
            assert!(!out.unknown_outcome, "{step:?}");
            assert_eq!(out.message, "authorization metadata: no document found");
            assert_eq!(
                DiscoverError::from_driver(&e, &secrets).kind(),
                DiscoverErrorKind::Refused
            );
        }
    }
}
