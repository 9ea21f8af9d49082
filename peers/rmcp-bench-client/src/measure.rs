//! What one run cost this process: CPU from `/proc/self/stat`, memory from
//! `/proc/self/status`, latencies as percentiles. The project's own bench sides measure
//! the same way.

use std::fs;

/// CPU time of this process's threads so far, in seconds: the sum of each live thread's
/// time on a CPU from `/proc/self/task/*/schedstat` (nanoseconds). Threads that exit
/// during a run would be missed; none of the benchmark's sides starts or ends threads
/// while calls run (the runtime's workers live throughout).
pub fn cpu_seconds() -> f64 {
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
pub fn cpu_ticks_seconds() -> f64 {
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

/// `(VmRSS, VmHWM)` in KiB: resident memory now and its peak.
pub fn rss_kib() -> (u64, u64) {
    let (rss, hwm, _, _) = memory_kib();
    (rss, hwm)
}

/// `(VmRSS, VmHWM, RssAnon, RssFile)` in KiB: resident memory now, its peak, and the
/// part of it now that is allocated memory and the part that is mapped files (the
/// program's code among them).
pub fn memory_kib() -> (u64, u64, u64, u64) {
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

/// The `p`-th percentile (0..=100) of sorted microsecond latencies.
pub fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}
