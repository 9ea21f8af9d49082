//! Calls in flight per server, for servers with a limit (`max_in_flight` in a binding, or
//! `ManagedServer::max_in_flight`): a call holds a slot for as long as it runs, and waits
//! for one inside its own deadline (so a call that never gets one fails as a timeout
//! before anything is sent).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots of each limited server, by its key and limit.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    map: Mutex<HashMap<(String, u32), Arc<Semaphore>>>,
}

impl Limits {
    /// Waits for one of the `limit` slots of the server known as `key`; the slot is held
    /// until the returned permit drops. `None` only if the slots were closed, which never
    /// happens.
    pub(crate) async fn slot(&self, key: &str, limit: u32) -> Option<OwnedSemaphorePermit> {
        let slots = {
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            map.entry((key.to_owned(), limit))
                .or_insert_with(|| Arc::new(Semaphore::new(limit as usize)))
                .clone()
        };
        slots.acquire_owned().await.ok()
    }
}
