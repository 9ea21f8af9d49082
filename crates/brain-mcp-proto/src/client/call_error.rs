//! Why a call ended without a result, in the core's words.

use super::rpc_error::RpcError;
use super::violation::{NeedsInput, Violation};

/// Why a call ended without a result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error. `forget_era` is set when the answer says
    /// the 2026-era framing is stale (-32022, -32020): forget the cached era.
    Rpc {
        /// The error.
        error: RpcError,
        /// Whether the cached era must be forgotten.
        forget_era: bool,
    },
    /// The server asked for user input this client cannot give.
    NeedsInput(NeedsInput),
    /// The server broke the protocol.
    Protocol(Violation),
    /// The session the call ran in is gone (a 404 to a request with a session id).
    SessionExpired,
    /// The server refused our credentials (401 or 403): it refused the request before
    /// acting on it, so the tool did not run.
    Unauthorized {
        /// The HTTP status.
        status: u16,
        /// Its `WWW-Authenticate` challenge, as sent (redact it before showing it).
        challenge: Option<String>,
    },
    /// The server runs the tool only as a task, and the call did not ask for one (the
    /// caller's record of the tool is out of date): the server refused before running it.
    TaskRequired,
}

impl CallError {
    /// Whether the request this error answers was certainly not acted on: the server
    /// refused it before the tool could run.
    pub fn tool_did_not_run(&self) -> bool {
        matches!(self, Self::Unauthorized { .. } | Self::TaskRequired)
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rpc { error, .. } => write!(f, "the server answered with {error}"),
            Self::NeedsInput(needs) => needs.fmt(f),
            Self::Protocol(violation) => violation.fmt(f),
            Self::SessionExpired => f.write_str("the server ended the session during the call"),
            Self::Unauthorized { status, .. } => {
                write!(f, "the server refused the credentials ({status})")
            }
            Self::TaskRequired => f.write_str(
                "the server runs this tool only as a task, and the call did not ask for one",
            ),
        }
    }
}
