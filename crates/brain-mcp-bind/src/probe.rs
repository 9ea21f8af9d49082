//! Learning a server's era with `server/discover`, and opening handshake-era sessions:
//! the drivers of the core's `era` and `handshake` rules.

use brain_mcp_proto::client::era::{self, Era, ProbeAnswer, Retry, Verdict};
use brain_mcp_proto::client::handshake::{self, HandshakeError};
use brain_mcp_proto::client::{Framing, Identity};
use brain_mcp_transport::{Delivery, ErrorKind, PostReply, TransportError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;

use crate::client::{McpClient, Target};
use crate::exchange::{self, CONTROL_BUDGET, StepError};
use crate::observe;
use crate::session::Session;

/// One gate per server whose era is being probed, so that calls arriving together at a
/// server the client has not met yet send one probe between them, not one each: the
/// first probes, the others wait for its turn to end and then read the cache. Entries
/// live only while a probe is in flight.
#[derive(Debug, Default)]
pub(crate) struct ProbeGates {
    gates: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl ProbeGates {
    /// Waits for the turn to probe `key` (cancelled with the caller's future).
    async fn turn<'a>(&'a self, key: &'a str) -> ProbeTurn<'a> {
        let gate = {
            let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
            gates.entry(key.to_owned()).or_default().clone()
        };
        let held = gate.clone().lock_owned().await;
        ProbeTurn {
            gates: self,
            key,
            gate,
            _held: held,
        }
    }

    /// Servers with a probe in flight or waited for.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.gates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The turn to probe one server; ending it lets the next waiter in and, when nobody waits,
/// forgets the gate. (A waiter that gives up just as a turn ends can leave one idle gate
/// behind: at most one per server, and the next turn there forgets it.)
struct ProbeTurn<'a> {
    gates: &'a ProbeGates,
    key: &'a str,
    gate: Arc<tokio::sync::Mutex<()>>,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

/// References to a gate held by the map, a turn's `gate` and its lock guard: a gate with
/// more has callers waiting on it.
const HELD_ALONE: usize = 3;

impl Drop for ProbeTurn<'_> {
    fn drop(&mut self) {
        // The gate is forgotten only when nobody waits on it: a waiter still needs it to
        // exclude calls that arrive while it probes. Counted under the map's lock, which
        // every new caller takes to find the gate, so none can slip in between.
        let mut gates = self
            .gates
            .gates
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if gates
            .get(self.key)
            .is_some_and(|g| Arc::ptr_eq(g, &self.gate))
            && Arc::strong_count(&self.gate) == HELD_ALONE
        {
            gates.remove(self.key);
        }
    }
}

/// The cached era of `target`'s server, if any (noted as read from the cache).
fn cached(client: &McpClient, target: &Target) -> Option<Era> {
    let era = client.eras().get(&target.key)?;
    observe::era(target, era, "cache");
    Some(era)
}

/// The era of `target`'s server: cached, or learned now. Transient answers (408, 429,
/// 5xx, no answer) are retried until `deadline`, honouring `Retry-After`, and never
/// cached; when they run out the call fails naming the last answer. Concurrent calls to a
/// server not yet known share one probe ([`ProbeGates`]).
pub(crate) async fn era_of(
    client: &McpClient,
    target: &Target,
    deadline: Instant,
) -> Result<Era, StepError> {
    if let Some(era) = cached(client, target) {
        return Ok(era);
    }
    let _turn = client.probes().turn(&target.key).await;
    // Another call may have learned the era while this one waited.
    if let Some(era) = cached(client, target) {
        return Ok(era);
    }
    let mut retry = Retry::default();
    loop {
        match probe(client, target).await {
            Verdict::Speaks(era) => {
                client.eras().set(&target.key, era);
                observe::era(target, era, "probe");
                return Ok(era);
            }
            Verdict::Refused(message) => return Err(StepError::Refused(message)),
            Verdict::Transient { why, retry_after } => {
                let remaining = deadline.saturating_duration_since(Instant::now());
                tracing::debug!(target: observe::MCP_TARGET, server = %target.origin(), why = %why, "era probe: no definite answer");
                let Some(wait) = retry.next_wait(retry_after, remaining) else {
                    return Err(StepError::Unreachable(format!(
                        "{why} (tried {} time(s); not cached)",
                        retry.attempts()
                    )));
                };
                tokio::time::sleep(wait).await;
            }
            _ => return Err(StepError::Protocol("the probe had no verdict".into())),
        }
    }
}

/// Sends one probe and reads the core's verdict on its answer.
async fn probe(client: &McpClient, target: &Target) -> Verdict {
    let out = era::probe(client.next_id(), client.identity());
    match exchange::post(client, target, out, CONTROL_BUDGET).await {
        Ok(PostReply::Stream(mut stream)) => loop {
            match stream.next().await {
                Some(Ok(inbound)) if inbound.is_final_response => {
                    return era::verdict(ProbeAnswer::Message(&inbound.text));
                }
                // Anything before the answer (a log line) says nothing about the era.
                Some(Ok(_)) => {}
                Some(Err(e)) => return verdict_of(&e),
                None => return era::verdict(ProbeAnswer::NotAnAnswer),
            }
        },
        Ok(PostReply::Accepted) => era::verdict(ProbeAnswer::NotAnAnswer),
        Err(e) => verdict_of(&e),
    }
}

/// The core's verdict on a transport error to the probe.
fn verdict_of(e: &TransportError) -> Verdict {
    let why = e.to_string();
    let answer = match e.kind() {
        ErrorKind::Status {
            status,
            rpc,
            www_authenticate,
            retry_after,
        } => ProbeAnswer::Status {
            status: status.as_u16(),
            rpc: rpc.as_ref(),
            challenge: www_authenticate.as_deref(),
            retry_after: *retry_after,
        },
        // A reply that is no answer at all: a server that does not know the method.
        ErrorKind::UnexpectedReply | ErrorKind::InvalidSessionId => ProbeAnswer::NotAnAnswer,
        // A redirect we refuse, a request we cannot build, a proxy that refuses us for who
        // we are (407, 403): nothing will change by retrying.
        ErrorKind::Redirect | ErrorKind::InvalidRequest => {
            return Verdict::Refused(why);
        }
        ErrorKind::Connect if matches!(e.proxy_status().map(|s| s.as_u16()), Some(403 | 407)) => {
            return Verdict::Refused(why);
        }
        _ if e.delivery() == Delivery::Answered => ProbeAnswer::NotAnAnswer,
        _ => ProbeAnswer::NoAnswer { why: &why },
    };
    era::verdict(answer)
}

/// Opens a handshake-era session as `identity` (its capabilities are declared once, in
/// `initialize`): `initialize`, then `notifications/initialized`.
///
/// The returned [`Session`] closes itself (DELETE) when dropped, including when this
/// function fails after the server created the session.
pub(crate) async fn open_session(
    client: &McpClient,
    target: &Target,
    identity: &Identity,
) -> Result<Session, StepError> {
    let out = handshake::initialize(client.next_id(), identity);
    let before = Framing::before_session();
    let (raw, session_id) = exchange::request(client, target, &before, out)
        .await
        .map_err(|(e, _)| e)?;
    // From here the server may hold a session: the guard ends it whatever happens next.
    if let Some(id) = &session_id {
        client.sessions().opened();
        observe::session_opened(target, id);
    }
    let opened = Framing::Handshake {
        session: session_id.clone(),
        version: None,
    };
    let mut session = Session::new(client.clone(), target.clone(), opened);
    let framing = handshake::negotiated(&raw, session_id).map_err(|e| match e {
        HandshakeError::Refused(error) => StepError::Rpc {
            error,
            status: None,
        },
        other => StepError::Protocol(other.to_string()),
    })?;
    session.set_framing(framing);
    session.notify_initialized().await?;
    Ok(session)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::task::JoinHandle;

    use super::ProbeGates;

    const A: &str = "http://a/mcp";

    /// A caller that takes its turn at `A` and ends it at once.
    fn caller(gates: &Arc<ProbeGates>) -> JoinHandle<()> {
        let gates = gates.clone();
        tokio::spawn(async move { drop(gates.turn(A).await) })
    }

    /// Lets every spawned task run as far as it can.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn one_probe_at_a_time_per_server_and_no_gate_left_behind() {
        let gates = Arc::new(ProbeGates::default());
        let first = gates.turn(A).await;
        // Another server is not held up.
        drop(gates.turn("http://b/mcp").await);

        let waiting = caller(&gates);
        settle().await;
        assert!(
            !waiting.is_finished(),
            "the second turn waits for the first"
        );
        drop(first);
        waiting.await.expect("the waiter gets its turn");
        assert_eq!(gates.len(), 0);

        // A waiter given up (its call dropped) leaves nothing either.
        let held = gates.turn(A).await;
        let abandoned = caller(&gates);
        tokio::task::yield_now().await;
        abandoned.abort();
        let _ = abandoned.await;
        drop(held);
        assert_eq!(gates.len(), 0);
    }

    #[tokio::test]
    async fn a_caller_arriving_while_a_waiter_probes_waits_for_it() {
        // The first turn ends with nothing cached (a transient answer), a waiter takes its
        // turn and probes; a call arriving now must wait for that probe, not run its own.
        let gates = Arc::new(ProbeGates::default());
        let first = gates.turn(A).await;
        let (probing_tx, probing_rx) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let second = {
            let gates = gates.clone();
            tokio::spawn(async move {
                let _turn = gates.turn(A).await;
                let _ = probing_tx.send(());
                let _ = done_rx.await;
            })
        };
        settle().await;
        drop(first);
        probing_rx.await.expect("the waiter gets its turn");
        let third = caller(&gates);
        settle().await;
        assert!(
            !third.is_finished(),
            "a third caller got a turn while the second still probes the same server"
        );
        let _ = done_tx.send(());
        second.await.expect("the second ends");
        third.await.expect("the third gets its turn after");
        assert_eq!(gates.len(), 0);
    }
}
