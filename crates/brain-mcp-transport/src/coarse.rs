//! Deadlines for background work (a session `DELETE`, a message that gets no answer),
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
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::Shared;
use tokio::runtime::{Handle, Id};
use tokio::task::{Unconstrained, unconstrained};
use tokio::time::{Instant, Sleep};

/// A timer that fires even when the task polling it has used up its Tokio budget (as
/// `tokio::time::timeout`'s does), so work that always uses the budget cannot put a
/// deadline off.
type Deadline = Pin<Box<Unconstrained<Sleep>>>;

/// A shared timer and the runtime it belongs to.
#[derive(Debug)]
struct Step {
    runtime: Id,
    /// When it fires.
    at: Instant,
    fired: Shared<Deadline>,
}

pin_project_lite::pin_project! {
    /// `work` under a deadline, from [`CoarseTimer::timeout`]: its output, or `None`
    /// when the deadline fired first. The deadline starts at the first poll, and `work`
    /// is polled before it, so work that is ready when it fires still counts.
    #[must_use = "futures do nothing unless polled"]
    pub struct Timeout<'a, F> {
        #[pin]
        work: F,
        fired: Fired<'a>,
    }
}

/// The deadline of a [`Timeout`]: not started yet, a shared grid timer, or a timer of
/// its own for a long limit.
enum Fired<'a> {
    Unarmed(&'a CoarseTimer, Duration),
    Shared(Shared<Deadline>),
    Own(Deadline),
}

impl<F: Future> Future for Timeout<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Fired::Unarmed(timer, limit) = *this.fired {
            *this.fired = timer.arm(limit);
        }
        if let Poll::Ready(out) = this.work.poll(cx) {
            return Poll::Ready(Some(out));
        }
        let fired = match this.fired {
            Fired::Shared(shared) => shared.poll_unpin(cx),
            Fired::Own(own) => own.as_mut().poll(cx),
            Fired::Unarmed(..) => Poll::Pending,
        };
        fired.map(|()| None)
    }
}

impl<F> std::fmt::Debug for Timeout<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeout").finish_non_exhaustive()
    }
}

/// Shared coarse deadlines (see the module docs). Cheap to keep per client: it holds
/// about one timer per grid step still to come, for limits up to
/// [`SHARED_STEPS`](Self::SHARED_STEPS) grid steps (longer ones get a timer of their
/// own); and of a runtime other than the caller's, only timers someone still waits on.
#[derive(Debug)]
pub struct CoarseTimer {
    grid: Duration,
    steps: Mutex<Vec<Step>>,
}

impl CoarseTimer {
    /// Limits longer than this many grid steps get a Tokio timer of their own: they are
    /// rare (the binding's are 2 s), and sharing them would keep one timer per step of
    /// the limit.
    pub const SHARED_STEPS: u32 = 64;

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

    /// Runs `work` for at least `limit` and at most `limit` plus one grid step (plus the
    /// runtime's own timer resolution, 1 ms, and scheduling); `None` when it did not
    /// finish in that time. Needs a Tokio runtime with time enabled, like
    /// `tokio::time::timeout`.
    ///
    /// The returned future holds `work` once, in place: an `async fn` taking it would
    /// keep a second copy in its state, and a session's cleanup task is mostly this.
    pub fn timeout<F: Future>(&self, limit: Duration, work: F) -> Timeout<'_, F> {
        Timeout {
            work,
            fired: Fired::Unarmed(self, limit),
        }
    }

    /// The deadline `limit` from now: a Tokio timer of its own for a long (or endless,
    /// as `Duration::MAX`) limit, else a shared one.
    fn arm(&self, limit: Duration) -> Fired<'static> {
        let shared = self.grid.checked_mul(Self::SHARED_STEPS);
        if shared.is_none_or(|most| limit > most) {
            Fired::Own(Box::pin(unconstrained(tokio::time::sleep(limit))))
        } else {
            Fired::Shared(self.deadline(limit))
        }
    }

    /// A shared timer that fires between `now + limit` and one grid step later.
    fn deadline(&self, limit: Duration) -> Shared<Deadline> {
        let runtime = Handle::current().id();
        let now = Instant::now();
        let due = now
            .checked_add(limit)
            .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400));
        let latest = due.checked_add(self.grid).unwrap_or(due);
        let mut steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        // Timers already fired go, and those of other runtimes that nobody waits on: a
        // runtime that was shut down would otherwise stay reachable (its driver's file
        // descriptors open) through its timer until that fired. The rest fire within
        // `SHARED_STEPS` grid steps, so few remain.
        steps.retain(|s| s.at > now && (s.runtime == runtime || s.fired.strong_count() > Some(1)));
        if let Some(step) = steps
            .iter()
            .find(|s| s.runtime == runtime && s.at >= due && s.at <= latest)
        {
            return step.fired.clone();
        }
        let fired = Box::pin(unconstrained(tokio::time::sleep_until(latest))).shared();
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

    #[tokio::test(start_paused = true)]
    async fn long_limits_get_a_timer_of_their_own() {
        let timer = CoarseTimer::new(GRID);
        assert_eq!(
            timer
                .timeout(GRID * CoarseTimer::SHARED_STEPS, async {})
                .await,
            Some(())
        );
        assert_eq!(timer.steps(), 1);
        assert_eq!(
            timer
                .timeout(GRID * (CoarseTimer::SHARED_STEPS + 1), async {})
                .await,
            Some(())
        );
        assert_eq!(timer.steps(), 1, "not kept");
        let start = Instant::now();
        let limit = GRID * (CoarseTimer::SHARED_STEPS + 1);
        assert_eq!(
            timer.timeout(limit, std::future::pending::<()>()).await,
            None
        );
        assert_eq!(start.elapsed(), limit, "Tokio's timeout: on time");
        // A limit past the end of time never fires, as with Tokio's timeout.
        let two_years = Duration::from_secs(2 * 365 * 86_400);
        let out = timer
            .timeout(Duration::MAX, tokio::time::sleep(two_years))
            .await;
        assert_eq!(out, Some(()));
    }

    #[test]
    fn the_work_is_held_once() {
        // An `async fn` taking the work would hold it twice: once as its argument and
        // once where it is polled.
        let timer = CoarseTimer::new(GRID);
        let work = async {
            let buffer = [0u8; 4096];
            std::future::ready(()).await;
            buffer.len()
        };
        let size = size_of_val(&work);
        let timed = timer.timeout(GRID, work);
        assert!(
            size_of_val(&timed) < size + 64,
            "{size} -> {}",
            size_of_val(&timed)
        );
    }

    #[test]
    fn the_deadline_starts_at_the_first_poll() {
        // Built outside a runtime, polled inside one, as an `async fn` could be.
        let timer = CoarseTimer::new(GRID);
        let timed = timer.timeout(Duration::from_secs(1), async { 5 });
        assert_eq!(runtime().block_on(timed), Some(5));
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn runtimes_share_no_timers_and_dead_ones_are_let_go() {
        let timer = CoarseTimer::new(Duration::from_secs(1));
        let first = runtime();
        let held = {
            let _inside = first.enter();
            timer.deadline(Duration::from_secs(2))
        };
        drop(first);
        let second = runtime();
        second.block_on(async { timer.timeout(Duration::from_secs(2), async {}).await });
        assert_eq!(
            timer.steps(),
            2,
            "the second runtime has its own timer; the first's is still awaited"
        );
        drop((held, second));
        let third = runtime();
        third.block_on(async { timer.timeout(Duration::from_secs(2), async {}).await });
        assert_eq!(
            timer.steps(),
            1,
            "timers of other runtimes that nobody awaits are dropped"
        );
    }
}
