//! Deadlines for background work (a session `DELETE`, a notification nobody answers),
//! shared on a coarse grid so that they do not each wake the runtime.
//!
//! Registering a Tokio timer that is due before every other one wakes the thread that
//! drives the timers (a write to the runtime's event fd, and on a multi-thread runtime
//! a wake-up of another worker). A host's call deadline is long (seconds to minutes), so
//! a 2 s cleanup bound registered per call is that earliest timer almost every time:
//! measured with `perf` at one call in flight on a 2-worker runtime, it was a third of
//! all such wake-ups. Here a deadline joins a timer already registered on the same
//! runtime that fires no earlier than it is due and at most one [`CoarseTimer::grid`]
//! later; when there is none, it registers one that fires one grid step after it is due,
//! which the deadlines of the next step then share. A shared timer stays registered
//! until it fires: about one registration per grid step, not one per request. A
//! deadline fires at its time or up to one step later.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::Shared;
use tokio::runtime::{Handle, Id};
use tokio::time::{Instant, Sleep};

/// A shared timer and the runtime it belongs to.
#[derive(Debug)]
struct Step {
    runtime: Id,
    /// When it fires.
    at: Instant,
    fired: Shared<Pin<Box<Sleep>>>,
}

/// Shared coarse deadlines (see the module docs). Cheap to keep per client: it holds
/// about one timer per grid step still to come, per runtime.
#[derive(Debug)]
pub struct CoarseTimer {
    grid: Duration,
    steps: Mutex<Vec<Step>>,
}

impl CoarseTimer {
    /// A timer whose deadlines fire up to `grid` late (at least 1 ms).
    pub fn new(grid: Duration) -> Self {
        Self {
            grid: grid.max(Duration::from_millis(1)),
            steps: Mutex::new(Vec::new()),
        }
    }

    /// How late a deadline may fire.
    pub fn grid(&self) -> Duration {
        self.grid
    }

    /// Runs `work` for at least `limit` and at most `limit` plus one grid step; `None`
    /// when it did not finish in that time. Needs a Tokio runtime with time enabled,
    /// like `tokio::time::timeout`.
    pub async fn timeout<F: Future>(&self, limit: Duration, work: F) -> Option<F::Output> {
        let fired = self.deadline(limit);
        tokio::select! {
            biased;
            out = work => Some(out),
            () = fired => None,
        }
    }

    /// A shared timer that fires between `now + limit` and one grid step later.
    fn deadline(&self, limit: Duration) -> Shared<Pin<Box<Sleep>>> {
        let runtime = Handle::current().id();
        let now = Instant::now();
        let due = now
            .checked_add(limit)
            .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400));
        let latest = due.checked_add(self.grid).unwrap_or(due);
        let mut steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        // Timers already fired (every runtime's) go; the rest fire within the longest
        // limit asked for, so few remain.
        steps.retain(|s| s.at > now);
        if let Some(step) = steps
            .iter()
            .find(|s| s.runtime == runtime && s.at >= due && s.at <= latest)
        {
            return step.fired.clone();
        }
        let fired = Box::pin(tokio::time::sleep_until(latest)).shared();
        steps.push(Step {
            runtime,
            at: latest,
            fired: fired.clone(),
        });
        fired
    }

    /// Shared timers held now (for tests).
    #[cfg(test)]
    fn steps(&self) -> usize {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: Duration = Duration::from_millis(100);

    #[tokio::test(start_paused = true)]
    async fn deadlines_in_one_step_share_one_timer() {
        let timer = CoarseTimer::new(GRID);
        let a = timer.deadline(Duration::from_secs(2));
        let b = timer.deadline(Duration::from_secs(2));
        assert_eq!(timer.steps(), 1);
        drop((a, b));
        tokio::time::advance(GRID / 2).await;
        let _c = timer.deadline(Duration::from_secs(2));
        assert_eq!(timer.steps(), 1, "half a step later: the same timer");
        tokio::time::advance(GRID).await;
        let _d = timer.deadline(Duration::from_secs(2));
        assert_eq!(
            timer.steps(),
            2,
            "a step later: a new one, the first still to come"
        );
        tokio::time::advance(Duration::from_secs(3)).await;
        let _e = timer.deadline(Duration::from_secs(2));
        assert_eq!(timer.steps(), 1, "timers that fired are forgotten");
    }

    #[tokio::test(start_paused = true)]
    async fn fires_at_its_time_or_up_to_one_step_later() {
        let timer = CoarseTimer::new(GRID);
        for limit_ms in [1, 99, 100, 101, 1999, 2000] {
            let limit = Duration::from_millis(limit_ms);
            let start = Instant::now();
            let out = timer.timeout(limit, std::future::pending::<()>()).await;
            assert_eq!(out, None);
            let waited = start.elapsed();
            assert!(waited >= limit, "{limit:?}: fired after {waited:?}");
            assert!(waited <= limit + GRID, "{limit:?}: fired after {waited:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn work_that_finishes_first_wins() {
        let timer = CoarseTimer::new(GRID);
        let out = timer
            .timeout(Duration::from_secs(2), async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                7
            })
            .await;
        assert_eq!(out, Some(7));
        let out = timer
            .timeout(Duration::from_millis(500), async {
                tokio::time::sleep(Duration::from_secs(5)).await;
            })
            .await;
        assert_eq!(out, None);
    }

    #[test]
    fn runtimes_do_not_share_timers() {
        let timer = std::sync::Arc::new(CoarseTimer::new(Duration::from_secs(3600)));
        for _ in 0..2 {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a runtime");
            let timer = timer.clone();
            let out = rt
                .block_on(async move { timer.timeout(Duration::from_secs(1), async { 1 }).await });
            assert_eq!(out, Some(1));
        }
        // One step per runtime: the first runtime's timer (its runtime gone) is never
        // polled from the second.
        assert_eq!(timer.steps(), 2);
    }
}
