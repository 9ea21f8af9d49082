//! The probe gate: one era probe per server at a time. Held by the shared client, taken
//! by the driver's probe.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

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
    pub(crate) async fn turn<'a>(&'a self, key: &'a str) -> ProbeTurn<'a> {
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
    pub(crate) fn len(&self) -> usize {
        self.gates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The turn to probe one server; ending it lets the next waiter in and, when nobody waits,
/// forgets the gate. (A waiter that gives up just as a turn ends can leave one idle gate
/// behind: at most one per server, and the next turn there forgets it.)
pub(crate) struct ProbeTurn<'a> {
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
