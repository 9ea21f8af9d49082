//! Learning a server's era with `server/discover`, and opening handshake-era sessions.

use brain_mcp_proto::jsonrpc::ErrorCode;
use brain_mcp_proto::mcp::{
    ClientCapabilities, DiscoverResult, EmptyParams, InitializeParams, InitializeResult, methods,
    parse,
};
use brain_mcp_proto::meta::RequestMetaBuilder;
use brain_mcp_proto::version::{self, ProtocolVersion};
use brain_mcp_transport::ErrorKind;

use crate::client::{McpClient, Target};
use crate::era::{self, Era, Verdict};
use crate::exchange::{self, StepError, Wire};
use crate::session::Session;

/// The era of `target`'s server: cached, or learned now with one `server/discover`.
pub(crate) async fn era_of(client: &McpClient, target: &Target) -> Result<Era, StepError> {
    if let Some(era) = client.eras().get(&target.key) {
        return Ok(era);
    }
    match discover(client, target).await? {
        Verdict::Speaks { era, cache } => {
            if cache {
                client.eras().set(&target.key, era);
            }
            Ok(era)
        }
        Verdict::Refused(message) => Err(StepError::Refused(message)),
    }
}

/// Sends `server/discover` in 2026-07-28 form and reads the verdict from the answer.
async fn discover(client: &McpClient, target: &Target) -> Result<Verdict, StepError> {
    let stateless = ProtocolVersion::LATEST;
    let params = EmptyParams {
        meta: Some(
            RequestMetaBuilder::new(stateless, ClientCapabilities::default())
                .client_info(client.info().clone())
                .build(),
        ),
        ..EmptyParams::default()
    };
    let answer = exchange::request(
        client,
        target,
        Wire::Stateless(stateless),
        methods::SERVER_DISCOVER,
        &params,
    )
    .await;
    match answer {
        Ok((raw, _session)) => Ok(era::from_result(
            parse::<DiscoverResult>(&raw).map_err(|e| e.to_string()),
        )),
        Err(StepError::Rpc { code, data, .. }) => Ok(era::from_rpc_error(code, data.as_deref())),
        Err(StepError::Transport(e)) => match e.kind() {
            ErrorKind::Status {
                status,
                rpc,
                www_authenticate,
            } => match (status.as_u16(), rpc) {
                (401 | 403, _) | (500..=599, _) | (_, None) => {
                    Ok(era::from_status(*status, www_authenticate.as_deref()))
                }
                (_, Some((code, _))) => Ok(era::from_rpc_error(*code, None)),
            },
            // A reply that is not a discover answer at all (202, a foreign body) means the
            // server does not know the method: a handshake-era server.
            ErrorKind::UnexpectedReply | ErrorKind::SessionExpired => Ok(Verdict::Speaks {
                era: Era::Handshake,
                cache: true,
            }),
            _ => Err(StepError::Transport(e)),
        },
        Err(StepError::Protocol(_)) => Ok(Verdict::Speaks {
            era: Era::Handshake,
            cache: true,
        }),
        Err(other) => Err(other),
    }
}

/// Opens a handshake-era session: `initialize`, then `notifications/initialized`.
///
/// The returned [`Session`] closes itself (DELETE) when dropped, including when this
/// function fails after the server created the session.
pub(crate) async fn open_session(
    client: &McpClient,
    target: &Target,
) -> Result<Session, StepError> {
    let offered = version::LATEST_HANDSHAKE;
    let params = InitializeParams {
        protocol_version: offered.as_str().to_owned(),
        capabilities: ClientCapabilities::default(),
        client_info: client.info().clone(),
        meta: None,
        extra: serde_json::Map::new(),
    };
    let wire = Wire::Handshake {
        session: None,
        version: None,
    };
    let (raw, session_id) =
        exchange::request(client, target, wire, methods::INITIALIZE, &params).await?;
    let session = Session::new(client.clone(), target.clone(), session_id);
    let result: InitializeResult =
        parse(&raw).map_err(|e| StepError::Protocol(format!("invalid initialize result: {e}")))?;
    let negotiated = version::negotiate_handshake(&result.protocol_version).map_err(|e| {
        StepError::Protocol(format!(
            "the server answered initialize with protocol version {:?}: {e}",
            result.protocol_version
        ))
    })?;
    let mut session = session;
    session.set_version(negotiated);
    session.notify_initialized().await?;
    Ok(session)
}

/// Whether an error answer to a stateless request means our cached era is stale.
pub(crate) fn invalidates_era(code: ErrorCode) -> bool {
    code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION || code == ErrorCode::HEADER_MISMATCH
}
