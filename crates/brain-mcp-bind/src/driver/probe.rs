//! Learning a server's era, once per server at a time: the driver of the core's `era`
//! rules over any link (one `server/discover`; over a child, its silence too).

use std::time::Duration;

use brain_mcp_proto::client::era::{self, Era, ProbeAnswer, Retry, Verdict};
use brain_mcp_proto::client::{CallError, Identity, ServerKind, Violation};
use tokio::time::Instant;

use super::error::{Cause, DriverError, NoEra, Step};
use super::request::CONTROL_BUDGET;
use crate::client::McpClient;
use brain_mcp_transport::TransportError;
use brain_tools_core::ErrorKind as Kind;

use crate::link::{Link, LinkError};
use crate::observe::{self, Failure, Operation};
use brain_mcp_proto::jsonrpc::Inbound;
use tracing::Instrument;

/// The cached era of the server known as `key`, if any (noted as read from the cache).
fn cached(client: &McpClient, key: &str, origin: &str) -> Option<Era> {
    let era = client.servers().era(key)?;
    observe::era(origin, era, "cache");
    Some(era)
}

/// The era of the server of `kind` known as `key` (named `origin` in logs): cached, or learned now
/// with `probe_once`. Transient answers (408, 429, 5xx, no answer) are retried until
/// `deadline`, honouring `Retry-After`, and never cached; when they run out the call fails
/// naming the last answer. Concurrent calls to a server not yet known share one probe
/// ([`ProbeGates`](crate::gate::ProbeGates)).
pub(crate) async fn era_of<F, P>(
    client: &McpClient,
    key: &str,
    kind: ServerKind,
    origin: &str,
    deadline: Instant,
    probe_once: F,
) -> Result<Era, DriverError>
where
    F: FnMut() -> P,
    P: Future<Output = Result<Probed, DriverError>>,
{
    if let Some(era) = cached(client, key, origin) {
        return Ok(era);
    }
    // Boxed: the probe's state stays out of every call's future (which a cached era,
    // the common case, never needs).
    Box::pin(learn(client, key, kind, origin, deadline, probe_once)).await
}

/// [`era_of`] for a server whose era is not cached: one probe at a time per server.
async fn learn<F, P>(
    client: &McpClient,
    key: &str,
    kind: ServerKind,
    origin: &str,
    deadline: Instant,
    mut probe_once: F,
) -> Result<Era, DriverError>
where
    F: FnMut() -> P,
    P: Future<Output = Result<Probed, DriverError>>,
{
    let _turn = client.probes().turn(key).await;
    // Another call may have learned the era while this one waited.
    if let Some(era) = cached(client, key, origin) {
        return Ok(era);
    }
    let mut retry = Retry::default();
    loop {
        let Probed { verdict, failed } = probe_once().await?;
        match (verdict, failed) {
            (Verdict::Speaks(era), _) => {
                client.servers().learned(key, kind, era);
                observe::era(origin, era, "probe");
                return Ok(era);
            }
            (Verdict::Unauthorized { status, challenge }, _) => {
                let error = CallError::Unauthorized { status, challenge };
                return Err(DriverError::answered(Step::Probe, error, status));
            }
            (Verdict::Refused, Some(e)) => {
                return Err(DriverError::new(Step::Probe, Cause::Refused(e)));
            }
            (
                Verdict::Transient {
                    status,
                    retry_after,
                },
                failed,
            ) => {
                let Some(last) = status.map(NoEra::Status).or(failed.map(NoEra::Link)) else {
                    return Err(unknown_verdict());
                };
                let remaining = deadline.saturating_duration_since(Instant::now());
                tracing::debug!(target: observe::MCP_TARGET, server = %origin, why = %last, "era probe: no definite answer");
                let Some(wait) = retry.next_wait(retry_after, remaining) else {
                    let attempts = retry.attempts();
                    let cause = Cause::Unreachable { last, attempts };
                    return Err(DriverError::new(Step::Probe, cause));
                };
                tokio::time::sleep(wait).await;
            }
            _ => return Err(unknown_verdict()),
        }
    }
}

/// A verdict this driver does not know (a newer core), or one without the failure it
/// must come with.
fn unknown_verdict() -> DriverError {
    let error = CallError::Protocol(Violation::UnknownStep("an unknown probe verdict"));
    DriverError::new(Step::Probe, Cause::Core(error))
}

/// One probe's verdict, with the link's failure it was read from (kept for the message
/// when the verdict ends the call).
#[derive(Debug)]
pub(crate) struct Probed {
    pub(crate) verdict: Verdict,
    pub(crate) failed: Option<TransportError>,
}

impl From<Verdict> for Probed {
    fn from(verdict: Verdict) -> Self {
        Self {
            verdict,
            failed: None,
        }
    }
}

/// Sends one probe over `link` as `identity` and reads the core's verdict on the answer;
/// with `patience`, a child's silence that long is an answer too. A probe that could
/// not be authorized fails at once: asking again would only ask for tokens again.
pub(crate) async fn probe(
    client: &McpClient,
    link: &Link,
    identity: &Identity,
    patience: Option<Duration>,
) -> Result<Probed, DriverError> {
    let out = era::probe(client.next_id(), identity);
    let framing = era::probe_framing();
    let op = Operation::start(link.peer(), &framing, &out, None, || link.secrets());
    let mut failure = None;
    let ask = async {
        let mut replies = match link.request(out, CONTROL_BUDGET).await {
            Ok(replies) => replies,
            Err(LinkError::Authorization(failure)) => {
                return Err(DriverError::new(Step::Probe, Cause::Authorization(failure)));
            }
            Err(LinkError::Transport(e)) => return Ok(failed(link, e, &mut failure)),
        };
        let verdict = loop {
            match replies.next().await {
                Some(Ok(received)) if received.is_final_response => {
                    if let Inbound::Error { code, message, .. } = &received.message {
                        failure = Some(Failure::rpc(*code, message));
                    }
                    break era::verdict(ProbeAnswer::Message(&received.message)).into();
                }
                // Anything before the answer (a log line) says nothing about the era.
                Some(Ok(_)) => {}
                Some(Err(e)) => break failed(link, e, &mut failure),
                None => {
                    failure = Some(Failure::of(Kind::ProtocolError.as_str()));
                    break era::verdict(ProbeAnswer::NotAnAnswer).into();
                }
            }
        };
        Ok(verdict)
    }
    .instrument(op.span());
    let verdict = match patience {
        Some(patience) => match tokio::time::timeout(patience, ask).await {
            Ok(verdict) => verdict,
            Err(_) => {
                failure = Some(Failure::of(Kind::Timeout.as_str()));
                Ok(era::verdict(ProbeAnswer::Silent).into())
            }
        },
        None => ask.await,
    };
    let failure = match &verdict {
        Err(e) => Some(e.failure()),
        Ok(_) => failure,
    };
    op.end(failure, || link.secrets());
    verdict
}

/// The core's verdict on a link's failure to carry the probe or its answer, the failure
/// kept, and noted for telemetry in `failure`.
fn failed(link: &Link, e: TransportError, failure: &mut Option<Failure>) -> Probed {
    let verdict = era::verdict(link.probe_answer(&e));
    let error = DriverError::new(Step::Probe, Cause::Link(e));
    *failure = Some(error.failure());
    let Cause::Link(e) = error.cause else {
        return verdict.into();
    };
    Probed {
        verdict,
        failed: Some(e),
    }
}
