//! CPU time per thread group, from `/proc/self/task/*/schedstat` (nanoseconds on a CPU).

use std::fs;

/// CPU time so far, split into the test server's threads and everything else (the client).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu {
    /// Nanoseconds spent by the client side: every thread but the server's.
    pub client_ns: u64,
    /// Nanoseconds spent by the test server's threads.
    pub server_ns: u64,
}

impl Cpu {
    /// Reads the current totals; threads that exit between reads are simply missed.
    pub fn now() -> Self {
        let mut cpu = Self::default();
        let Ok(tasks) = fs::read_dir("/proc/self/task") else {
            return cpu;
        };
        for task in tasks.flatten() {
            let dir = task.path();
            let Some(ns) = fs::read_to_string(dir.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            else {
                continue;
            };
            // Thread names are cut to 15 bytes: "mcp-test-server-PORT" reads "mcp-test-server".
            let comm = fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if comm.starts_with("mcp-test-server") {
                cpu.server_ns += ns;
            } else {
                cpu.client_ns += ns;
            }
        }
        cpu
    }

    /// The CPU spent since `earlier`.
    pub fn since(self, earlier: Self) -> Self {
        Self {
            client_ns: self.client_ns.saturating_sub(earlier.client_ns),
            server_ns: self.server_ns.saturating_sub(earlier.server_ns),
        }
    }

    /// Whether the kernel reports per-thread CPU time here.
    pub fn available() -> bool {
        Self::now().client_ns > 0
    }
}
