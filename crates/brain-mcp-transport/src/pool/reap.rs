//! The reaper: one task per pool while it has connections, closing those idle past the
//! pool's idle timeout.

use std::sync::Weak;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Pool;

/// Starts the task that closes idle connections: it sweeps every quarter of the idle
/// timeout while the pool has connections, then ends (the next connection starts it
/// again). A runtime shut down under it lets the next connection start another.
pub(super) fn reap(pool: Weak<Pool>, idle_timeout: Duration) {
    /// The reaper's claim on `reaping`, given up when its task ends any way (its
    /// runtime shut down, say) while it holds it.
    struct Running {
        pool: Weak<Pool>,
        claimed: bool,
    }
    impl Drop for Running {
        fn drop(&mut self) {
            if let Some(pool) = self.pool.upgrade().filter(|_| self.claimed) {
                pool.reaping.store(false, Ordering::Release);
            }
        }
    }
    let every = (idle_timeout / 4).max(Duration::from_millis(10));
    tokio::spawn(async move {
        let mut running = Running {
            pool,
            claimed: true,
        };
        loop {
            tokio::time::sleep(every).await;
            let Some(pool) = running.pool.upgrade() else {
                return;
            };
            if pool.sweep() {
                continue;
            }
            // Nothing left: give the claim up, then look once more, since a connection
            // that opened meanwhile saw the claim taken and started no reaper.
            pool.reaping.store(false, Ordering::Release);
            if !pool.sweep() || pool.reaping.swap(true, Ordering::AcqRel) {
                running.claimed = false;
                return;
            }
        }
    });
}
