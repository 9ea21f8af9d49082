//! Which protocol era a server speaks, learned from one `server/discover` probe.
//!
//! The probe is the 2026-07-28 form of `server/discover`: it has no side effect, and
//! servers of both eras answer it recognisably. Only a definite answer decides the era and
//! may be cached; an answer that says "not now" (408, 429, 5xx) or no answer at all is
//! transient: the driver retries within its deadline ([`Retry`]) and caches nothing.

use std::time::Duration;

use crate::jsonrpc::{self, ErrorCode, Inbound, RequestId};
use crate::mcp::{DiscoverResult, EmptyParams, methods, parse};
use crate::meta::RequestMetaBuilder;
use crate::version::{self, ProtocolVersion};

use super::framing::Framing;
use super::outgoing::{Expect, Identity, Outgoing};
use super::rpc_error::RpcError;

/// The protocol era of a server, with the version to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize` and sessions (2025-03-26 to 2025-11-25); the version is negotiated
    /// per session.
    Handshake,
    /// No handshake: every request carries this version in `_meta` and headers.
    Stateless(ProtocolVersion),
}

impl Era {
    /// A short name for diagnostics: `handshake` or the stateless version.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Handshake => "handshake",
            Self::Stateless(v) => v.as_str(),
        }
    }
}

/// The framing the probe is sent in: the latest version, stateless.
pub fn probe_framing() -> Framing {
    Framing::Stateless(ProtocolVersion::LATEST)
}

/// The probe: `server/discover` as a 2026-07-28 request with id `id`.
pub fn probe(id: RequestId, identity: &Identity) -> Outgoing {
    let version = ProtocolVersion::LATEST;
    let params = EmptyParams {
        meta: Some(
            RequestMetaBuilder::new(version, identity.capabilities().clone())
                .client_info(identity.info().clone())
                .build(),
        ),
        ..EmptyParams::default()
    };
    let body = jsonrpc::encode_request(&id, methods::SERVER_DISCOVER, &params).unwrap_or_default();
    let framing = probe_framing();
    let mut out = Outgoing::new(
        methods::SERVER_DISCOVER,
        body,
        framing.headers(methods::SERVER_DISCOVER, None, Vec::new()),
        Expect::Response(id),
    );
    out.idempotent = true;
    out
}

/// What came back for the probe.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum ProbeAnswer<'a> {
    /// The answer: a result or an error response.
    Message(&'a Inbound),
    /// An error status; `rpc` is the JSON-RPC error its body held, `retry_after` its
    /// `Retry-After`.
    Status {
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC error in the body.
        rpc: Option<&'a RpcError>,
        /// `WWW-Authenticate` of a 401 or 403.
        challenge: Option<&'a str>,
        /// `Retry-After`, when the server sent one in seconds.
        retry_after: Option<Duration>,
    },
    /// A reply that is not an answer to a request at all (`202`, a body that is not our
    /// response, an unknown content type): a server that does not know the method.
    NotAnAnswer,
    /// No answer: the connection failed or timed out (the driver keeps how).
    NoAnswer,
    /// The request cannot be sent as configured, and retrying changes nothing (a redirect
    /// refused, a request that cannot be built, a proxy that refuses us; the driver keeps
    /// which).
    Unusable,
    /// A child process ended its output without answering (it refused a first message
    /// other than `initialize` and quit).
    Ended,
    /// A child process said nothing within [`PROBE_PATIENCE`] (it ignored the probe).
    Silent,
}

/// How long a probe over a child process waits for the answer (the child's start
/// included) before the silence counts as a handshake-era server.
pub const PROBE_PATIENCE: Duration = Duration::from_secs(10);

/// What a probe's answer says about the server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The server speaks this era; keep it for later calls.
    Speaks(Era),
    /// The server refused our credentials (401 or 403): no era can be learned without
    /// authorization.
    Unauthorized {
        /// The HTTP status.
        status: u16,
        /// Its `WWW-Authenticate` challenge, as sent.
        challenge: Option<String>,
    },
    /// The request cannot reach the server as configured: the call cannot go on.
    Refused,
    /// The server is not ready or did not answer; try again after `retry_after` (or a
    /// backoff of the driver's), and cache nothing.
    Transient {
        /// The status the server answered with (408, 429, 5xx); `None` when no answer
        /// came.
        status: Option<u16>,
        /// What the server asked for, if anything.
        retry_after: Option<Duration>,
    },
}

/// The verdict on one answer to the probe. The table is in `docs/call-path.md`.
///
/// Over a child process, two silent answers mean the handshake era: a child that ends its
/// output without answering, or stays silent for [`PROBE_PATIENCE`] (some servers refuse
/// any first message other than `initialize` and quit, some ignore it). Neither is
/// retried: a process is not a flaky network.
pub fn verdict(answer: ProbeAnswer<'_>) -> Verdict {
    match answer {
        ProbeAnswer::Message(message) => from_message(message),
        ProbeAnswer::Status {
            status,
            rpc,
            challenge,
            retry_after,
        } => match status {
            401 | 403 => Verdict::Unauthorized {
                status,
                challenge: challenge.map(str::to_owned),
            },
            408 | 429 | 500..=599 => Verdict::Transient {
                status: Some(status),
                retry_after,
            },
            _ => rpc.map_or(Verdict::Speaks(Era::Handshake), from_rpc_error),
        },
        ProbeAnswer::NotAnAnswer | ProbeAnswer::Ended | ProbeAnswer::Silent => {
            Verdict::Speaks(Era::Handshake)
        }
        ProbeAnswer::NoAnswer => Verdict::Transient {
            status: None,
            retry_after: None,
        },
        ProbeAnswer::Unusable => Verdict::Refused,
    }
}

fn from_message(message: &Inbound) -> Verdict {
    match message {
        Inbound::Response { result, .. } => match parse::<DiscoverResult>(result) {
            Ok(found) => match version::pick_stateless(&found.supported_versions) {
                Some(v) => Verdict::Speaks(Era::Stateless(v)),
                // A result naming only handshake versions (or none we know).
                None => Verdict::Speaks(Era::Handshake),
            },
            // A success that is not a DiscoverResult (some servers answer `{}` to anything).
            Err(_) => Verdict::Speaks(Era::Handshake),
        },
        Inbound::Error { .. } => RpcError::of(message)
            .as_ref()
            .map_or(Verdict::Speaks(Era::Handshake), from_rpc_error),
        _ => Verdict::Speaks(Era::Handshake),
    }
}

fn from_rpc_error(error: &RpcError) -> Verdict {
    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        && let Some(v) = version::pick_stateless(&error.supported_versions())
    {
        return Verdict::Speaks(Era::Stateless(v));
    }
    // -32000 (no session), -32601 (unknown method), -32602, -32022 with only handshake
    // versions: all say the server wants the handshake.
    Verdict::Speaks(Era::Handshake)
}

/// How long to wait before the next probe after a transient answer, and when to stop.
#[derive(Clone, Debug, Default)]
pub struct Retry {
    attempts: u32,
}

impl Retry {
    /// Probes tried at most, the first included.
    pub const MAX_ATTEMPTS: u32 = 4;
    /// The first backoff; it doubles each time.
    const FIRST_BACKOFF: Duration = Duration::from_millis(250);
    /// The longest backoff of our own.
    const MAX_BACKOFF: Duration = Duration::from_secs(4);

    /// After a transient answer: the wait before probing again, or `None` to give up,
    /// because the attempts are spent or the wait would not end within `remaining`.
    /// A server's `Retry-After` is honoured as it is, if it fits.
    pub fn next_wait(
        &mut self,
        retry_after: Option<Duration>,
        remaining: Duration,
    ) -> Option<Duration> {
        self.attempts += 1;
        if self.attempts >= Self::MAX_ATTEMPTS {
            return None;
        }
        let backoff =
            super::health::doubling(Self::FIRST_BACKOFF, Self::MAX_BACKOFF, self.attempts - 1);
        let wait = retry_after.unwrap_or(backoff);
        (wait < remaining).then_some(wait)
    }

    /// Probes sent so far that got a transient answer.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

/// A framing and its era, each from the other (the era's rules decide the framing).
impl Framing {
    /// The framing a server of `era` needs before any session.
    pub fn for_era(era: Era) -> Self {
        match era {
            Era::Handshake => Self::before_session(),
            Era::Stateless(v) => Self::Stateless(v),
        }
    }

    /// The era.
    pub fn era(&self) -> Era {
        match self {
            Self::Handshake { .. } => Era::Handshake,
            Self::Stateless(v) => Era::Stateless(*v),
        }
    }
}
