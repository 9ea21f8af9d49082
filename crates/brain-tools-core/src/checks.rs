//! Schema checks inside a call's deadline and cancellation.
//!
//! A schema that can cost more than linear time (one with references, which can make
//! validation exponential; `uniqueItems`, quadratic; or a regular expression) is checked
//! on the blocking pool, not on the async workers, so other calls go on, and the call
//! stops waiting at its deadline or cancel. At most one such check per core runs at a
//! time: a check that outlives its call keeps its permit until it ends, so a hostile
//! schema can burn a bounded share of the machine, not all of it. Other schemas are
//! checked in place (linear in the value, which budgets already bound).

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::schema::{CompiledSchema, Violation, Violations};

/// Why a check did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The call's deadline passed.
    Timeout,
    /// The caller cancelled.
    Cancelled,
}

/// The permits for checks that run on the blocking pool: one per core.
fn heavy_permits() -> Arc<Semaphore> {
    static PERMITS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    PERMITS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
            Arc::new(Semaphore::new(cores))
        })
        .clone()
}

/// Checks `value` against `schema` before `deadline`, unless `cancel` fires first; gives
/// the value back with the verdict.
pub(crate) async fn validate(
    schema: &CompiledSchema,
    value: Value,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<(Value, Result<(), Violations>), Stop> {
    if !schema.is_costly() {
        let verdict = schema.validate(&value);
        return Ok((value, verdict));
    }
    let permits = heavy_permits();
    let permit = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Stop::Cancelled),
        () = tokio::time::sleep_until(deadline) => return Err(Stop::Timeout),
        permit = permits.acquire_owned() => permit,
    };
    let schema = schema.clone();
    let task = tokio::task::spawn_blocking(move || {
        let verdict = schema.validate(&value);
        drop(permit);
        (value, verdict)
    });
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Stop::Cancelled),
        () = tokio::time::sleep_until(deadline) => Err(Stop::Timeout),
        done = task => Ok(done.unwrap_or_else(|_| {
            // The validator panicked: report it as a violation, never pass the value.
            (Value::Null, Err(Violations(vec![Violation {
                instance_path: String::new(),
                message: "the schema check failed".to_owned(),
            }])))
        })),
    }
}
