//! A closed loop of calls: `concurrency` tasks share `calls` calls, each task starting its
//! next call as soon as the last one returns, as a busy host's callers do.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::measure::Calls;

/// Runs `calls` calls of `call` on `concurrency` tasks; returns every latency (µs) and the
/// failures.
pub(crate) async fn run<F, Fut>(concurrency: usize, calls: usize, call: F) -> Calls
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (next, call) = (next.clone(), call.clone());
        tasks.spawn(async move {
            let mut out = Calls {
                latencies: Vec::with_capacity(calls / concurrency.max(1) + 1),
                errors: 0,
                first_error: None,
            };
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                let started = Instant::now();
                let outcome = call().await;
                let us = started.elapsed().as_micros();
                out.latencies.push(u32::try_from(us).unwrap_or(u32::MAX));
                if let Err(e) = outcome {
                    out.errors += 1;
                    out.first_error.get_or_insert(e);
                }
            }
            out
        });
    }
    let mut all = Calls {
        latencies: Vec::with_capacity(calls),
        errors: 0,
        first_error: None,
    };
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(part) => {
                all.latencies.extend(part.latencies);
                all.errors += part.errors;
                all.first_error = all.first_error.or(part.first_error);
            }
            Err(e) => {
                all.errors += 1;
                all.first_error
                    .get_or_insert(format!("a call task failed: {e}"));
            }
        }
    }
    all
}
