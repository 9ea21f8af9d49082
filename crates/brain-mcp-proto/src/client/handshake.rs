//! The handshake era's session: `initialize`, the negotiated version, closing and
//! cancelling.

use std::borrow::Cow;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::jsonrpc::{self, RequestId};
use crate::mcp::{CancelledParams, methods, parse};
use crate::version::{self, ProtocolVersion};

use super::framing::Framing;
use super::outgoing::{Expect, Header, Identity, Outgoing};
use super::rpc_error::RpcError;
use super::violation::Violation;

/// The version offered in `initialize`: the newest handshake-era revision.
pub const OFFERED: ProtocolVersion = version::LATEST_HANDSHAKE;

/// `initialize` with id `id`.
///
/// Not idempotent: a resent `initialize` can open a second session the client never
/// learns of, and so never closes.
pub fn initialize(id: RequestId, identity: &Identity) -> Outgoing {
    // Written once with the identity: only the id is new per session.
    let body = jsonrpc::encode_request_after_id(&id, identity.initialize_after_id());
    let framing = Framing::before_session();
    let mut out = Outgoing::new(
        methods::INITIALIZE,
        body,
        framing.headers(methods::INITIALIZE, None, Vec::new()),
        Expect::Response(id),
    );
    out.resume_attempts = framing.resume_attempts();
    out.resume_headers = framing.base_headers();
    out
}

/// Why a session could not be opened.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The server answered `initialize` with a JSON-RPC error.
    Refused(RpcError),
    /// The server's answer breaks the protocol (an unreadable result, a version we do
    /// not speak).
    Protocol(Violation),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(e) => write!(f, "the server refused the handshake: {e}"),
            Self::Protocol(violation) => violation.fmt(f),
        }
    }
}

impl From<HandshakeError> for super::call_error::CallError {
    fn from(e: HandshakeError) -> Self {
        match e {
            HandshakeError::Refused(error) => Self::Rpc {
                error,
                forget_era: false,
            },
            HandshakeError::Protocol(message) => Self::Protocol(message),
        }
    }
}

/// The session a server may hold once it has answered `initialize` with `session_id`,
/// before the answer is read: enough to end it (its DELETE and cancels), whatever
/// the answer turns out to say.
pub fn pending(session_id: Option<String>) -> Framing {
    Framing::Handshake {
        session: session_id,
        version: None,
    }
}

/// What the handshake reads of an `initialize` result (named as the model's type, which
/// errors show): the version the server chose, borrowed; and the members it only
/// requires, checked for their shape without being built, since the handshake uses
/// neither the server's capabilities nor its identity.
#[derive(Deserialize)]
struct InitializeResult<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    #[serde(rename = "capabilities")]
    _capabilities: AnyObject,
    #[serde(rename = "serverInfo", borrow)]
    _server_info: Named<'a>,
}

/// `serverInfo`: a name and a version, as every `Implementation` has.
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(rename = "name", borrow)]
    _name: Cow<'a, str>,
    #[serde(rename = "version", borrow)]
    _version: Cow<'a, str>,
}

/// Any JSON object, skipped.
struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyObject)
            }
        }
        d.deserialize_map(V)
    }
}

/// The session opened by `result`, the result of `initialize` (an error answer having
/// been read already), whose HTTP reply carried `session_id`.
pub fn negotiated(
    result: &RawValue,
    session_id: Option<String>,
) -> Result<Framing, HandshakeError> {
    let result: InitializeResult<'_> = parse(result)
        .map_err(|e| HandshakeError::Protocol(Violation::InvalidInitialize(e.to_string())))?;
    let negotiated = version::negotiate_handshake(&result.protocol_version).map_err(|e| {
        HandshakeError::Protocol(Violation::UnsupportedVersion {
            version: result.protocol_version.to_string(),
            detail: e.to_string(),
        })
    })?;
    Ok(Framing::Handshake {
        session: session_id,
        version: Some(negotiated),
    })
}

/// `notifications/initialized`, the second and last step of the handshake.
pub fn initialized(session: &Framing) -> Outgoing {
    let body = jsonrpc::encode_bare_notification(methods::INITIALIZED);
    let mut out = Outgoing::new(
        methods::INITIALIZED,
        body,
        session.headers(methods::INITIALIZED, None, Vec::new()),
        Expect::Accepted,
    );
    out.idempotent = true;
    out
}

/// The reason a cancel gives when the caller stopped waiting.
pub(crate) const ABANDONED: &str = "the caller stopped waiting (timeout or interruption)";

/// `notifications/cancelled` for `request` in `session`: what a handshake-era client
/// sends when it stops waiting for a request. The 2026 era has no such message (closing
/// the reply stream cancels), so there it is `None`.
pub fn cancel(session: &Framing, request: RequestId, reason: &str) -> Option<Outgoing> {
    if !matches!(session, Framing::Handshake { .. }) {
        return None;
    }
    let params = CancelledParams {
        request_id: Some(request),
        reason: Some(reason.to_owned()),
        meta: None,
        extra: serde_json::Map::new(),
    };
    let body = jsonrpc::encode_notification(methods::CANCELLED, Some(&params)).ok()?;
    Some(Outgoing::new(
        methods::CANCELLED,
        body,
        session.headers(methods::CANCELLED, None, Vec::new()),
        Expect::Accepted,
    ))
}

/// The headers of the DELETE that ends `session`; `None` when there is nothing to end
/// (no session id).
pub fn close(session: &Framing) -> Option<Vec<Header>> {
    session.session_id()?;
    Some(session.base_headers())
}

/// Whether the answer to the DELETE means the session is over: `2xx`, `405` (the server
/// does not let clients end sessions; it will expire) and `404` (already gone).
pub fn closed(status: u16) -> bool {
    (200..300).contains(&status) || status == 405 || status == 404
}

/// Whether an error status to a request in `session` means the session is gone: `404`
/// to a request that carried a session id.
pub fn expired(session: &Framing, status: u16) -> bool {
    status == 404 && session.session_id().is_some()
}
