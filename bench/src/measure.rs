//! What one run cost the process that made it: CPU from `/proc/self/stat`, memory from
//! `/proc/self/status`, latencies as percentiles, all reported as one JSON line. The rmcp
//! side (peers/rmcp-bench-client) measures the same way and prints the same fields.

use std::fs;
use std::time::Instant;

use serde_json::{Value, json};

/// CPU time of this process's threads so far, in seconds: the sum of each live thread's
/// time on a CPU from `/proc/self/task/*/schedstat` (nanoseconds). Threads that exit
/// during a run would be missed; none of the benchmark's sides starts or ends threads
/// while calls run (the runtime's workers live throughout).
pub(crate) fn cpu_seconds() -> f64 {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut ns = 0u64;
    for task in tasks.flatten() {
        ns += fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
    }
    ns as f64 / 1e9
}

/// User plus system CPU of the whole process (threads gone included) from
/// `/proc/self/stat`, in seconds; 10 ms resolution. A cross-check of [`cpu_seconds`].
pub(crate) fn cpu_ticks_seconds() -> f64 {
    let Ok(stat) = fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 (index 11 and 12 here), in USER_HZ = 100.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// `(VmRSS, VmHWM)` in KiB: resident memory now and its peak so far.
pub(crate) fn rss_kib() -> (u64, u64) {
    let (rss, hwm, _, _) = memory_kib();
    (rss, hwm)
}

/// `(VmRSS, VmHWM, RssAnon, RssFile)` in KiB: resident memory now, its peak, and the
/// part of it now that is allocated memory and the part that is mapped files (the
/// program's own code and read-only data among them).
pub(crate) fn memory_kib() -> (u64, u64, u64, u64) {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (
        field("VmRSS:"),
        field("VmHWM:"),
        field("RssAnon:"),
        field("RssFile:"),
    )
}

/// The `p`-th percentile (0..=100) of sorted latencies.
pub(crate) fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The measurements of one run, started before the first call.
pub(crate) struct Run {
    cpu: f64,
    ticks: f64,
    started: Instant,
    rss_base: u64,
}

/// What the calls of a run produced.
pub(crate) struct Calls {
    /// Latency of every call in microseconds.
    pub(crate) latencies: Vec<u32>,
    /// Calls that failed.
    pub(crate) errors: usize,
    /// The first failure's message.
    pub(crate) first_error: Option<String>,
}

impl Run {
    /// Starts measuring: CPU, wall time and the resident memory before any call.
    pub(crate) fn start() -> Self {
        Self {
            rss_base: rss_kib().0,
            cpu: cpu_seconds(),
            ticks: cpu_ticks_seconds(),
            started: Instant::now(),
        }
    }

    /// The run's JSON line for `side`.
    pub(crate) fn report(self, side: &str, mut calls: Calls) -> Value {
        let wall = self.started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - self.cpu;
        let ticks = cpu_ticks_seconds() - self.ticks;
        let (rss, hwm, anon, file) = memory_kib();
        calls.latencies.sort_unstable();
        let lat = &calls.latencies;
        json!({
            "side": side, "calls": lat.len(), "errors": calls.errors,
            "first_error": calls.first_error, "wall_s": wall, "cpu_s": cpu, "cpu_ticks_s": ticks,
            "p50_us": percentile(lat, 50.0), "p99_us": percentile(lat, 99.0),
            "rss_base_kib": self.rss_base, "rss_kib": rss, "rss_hwm_kib": hwm,
            "rss_anon_kib": anon, "rss_file_kib": file,
        })
    }
}
