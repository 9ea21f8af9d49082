//! Learning a server's era, once per server at a time: the driver of the core's `era`
//! rules over any link (one `server/discover`; over a child, its silence too).

use std::time::Duration;

use brain_mcp_proto::client::era::{self, Era, ProbeAnswer, Retry, Verdict};
use brain_mcp_proto::client::{CallError, Identity};
use tokio::time::Instant;

use super::error::{Cause, DriverError, Step};
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
    let era = client.eras().get(key)?;
    observe::era(origin, era, "cache");
    Some(era)
}

/// The era of the server known as `key` (named `origin` in logs): cached, or learned now
/// with `probe_once`. Transient answers (408, 429, 5xx, no answer) are retried until
/// `deadline`, honouring `Retry-After`, and never cached; when they run out the call fails
/// naming the last answer. Concurrent calls to a server not yet known share one probe
/// ([`ProbeGates`](crate::gate::ProbeGates)).
pub(crate) async fn era_of<F, P>(
    client: &McpClient,
    key: &str,
    origin: &str,
    deadline: Instant,
    probe_once: F,
) -> Result<Era, DriverError>
where
    F: FnMut() -> P,
    P: Future<Output = Result<Verdict, DriverError>>,
{
    if let Some(era) = cached(client, key, origin) {
        return Ok(era);
    }
    // Boxed: the probe's state stays out of every call's future (which a cached era,
    // the common case, never needs).
    Box::pin(learn(client, key, origin, deadline, probe_once)).await
}

/// [`era_of`] for a server whose era is not cached: one probe at a time per server.
async fn learn<F, P>(
    client: &McpClient,
    key: &str,
    origin: &str,
    deadline: Instant,
    mut probe_once: F,
) -> Result<Era, DriverError>
where
    F: FnMut() -> P,
    P: Future<Output = Result<Verdict, DriverError>>,
{
    let _turn = client.probes().turn(key).await;
    // Another call may have learned the era while this one waited.
    if let Some(era) = cached(client, key, origin) {
        return Ok(era);
    }
    let mut retry = Retry::default();
    loop {
        match probe_once().await? {
            Verdict::Speaks(era) => {
                client.eras().set(key, era);
                observe::era(origin, era, "probe");
                return Ok(era);
            }
            Verdict::Unauthorized { status, challenge } => {
                let error = CallError::Unauthorized { status, challenge };
                return Err(DriverError::answered(Step::Probe, error, status));
            }
            Verdict::Refused(why) => {
                return Err(DriverError::new(Step::Probe, Cause::Refused(why)));
            }
            Verdict::Transient { why, retry_after } => {
                let remaining = deadline.saturating_duration_since(Instant::now());
                tracing::debug!(target: observe::MCP_TARGET, server = %origin, why = %why, "era probe: no definite answer");
                let Some(wait) = retry.next_wait(retry_after, remaining) else {
                    let why = format!("{why} (tried {} time(s); not cached)", retry.attempts());
                    return Err(DriverError::new(Step::Probe, Cause::Unreachable(why)));
                };
                tokio::time::sleep(wait).await;
            }
            _ => {
                let error = CallError::Protocol("the probe had no verdict".into());
                return Err(DriverError::new(Step::Probe, Cause::Core(error)));
            }
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
) -> Result<Verdict, DriverError> {
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
            Err(LinkError::Transport(e)) => {
                let verdict = verdict_of(link, &e);
                failure = Some(DriverError::new(Step::Probe, Cause::Link(e)).failure());
                return Ok(verdict);
            }
        };
        let verdict = loop {
            match replies.next().await {
                Some(Ok(received)) if received.is_final_response => {
                    if let Inbound::Error { code, message, .. } = &received.message {
                        failure = Some(Failure::rpc(*code, message));
                    }
                    break era::verdict(ProbeAnswer::Message(&received.message));
                }
                // Anything before the answer (a log line) says nothing about the era.
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    let verdict = verdict_of(link, &e);
                    failure = Some(DriverError::new(Step::Probe, Cause::Link(e)).failure());
                    break verdict;
                }
                None => {
                    failure = Some(Failure::of(Kind::ProtocolError.as_str()));
                    break era::verdict(ProbeAnswer::NotAnAnswer);
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
                Ok(era::verdict(ProbeAnswer::Silent))
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

/// The core's verdict on a link's failure to carry the probe or its answer.
fn verdict_of(link: &Link, e: &TransportError) -> Verdict {
    let why = e.to_string();
    era::verdict(link.probe_answer(e, &why))
}
