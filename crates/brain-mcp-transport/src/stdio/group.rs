//! A managed child's whole process tree. Each child starts as the leader of its own
//! process group, so a wrapper (`sh -c`, `npx`, `uvx`) and everything it starts can be
//! ended together: SIGTERM to the group, then SIGKILL after a short grace. Killing only
//! the direct child would leave a wrapped server running after its call, or its host.

use std::time::Duration;

/// How long a group has between SIGTERM and SIGKILL.
pub const GROUP_GRACE: Duration = Duration::from_secs(2);

/// The process group a child leads (its pid), or none where groups are not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group(Option<u32>);

impl Group {
    /// The group led by the child with `pid`.
    pub(crate) fn led_by(pid: Option<u32>) -> Self {
        Self(pid)
    }

    /// Ends every process still in the group: SIGTERM now, SIGKILL after
    /// [`GROUP_GRACE`] (from a short-lived thread, so this works from `Drop` and
    /// outside a runtime). Nothing happens when the group is already empty.
    pub(crate) fn end(self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            let group = Pid::from_raw(pgid);
            if killpg(group, Signal::SIGTERM).is_ok() {
                let _ = std::thread::Builder::new()
                    .name("brain-stdio-group-kill".into())
                    .spawn(move || {
                        std::thread::sleep(GROUP_GRACE);
                        let _ = killpg(group, Signal::SIGKILL);
                    });
            }
        }
    }
}
