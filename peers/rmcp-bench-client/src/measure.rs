//! What one run cost this process: CPU from `/proc/self/stat`, memory from
//! `/proc/self/status`, latencies as percentiles. The project's own bench sides measure
//! the same way.

use std::fs;

/// User plus system CPU of the whole process so far, in seconds (all threads, live or gone).
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15; "state" (field 3) is index 0 here. Linux
    // reports them in USER_HZ, which is 100.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// `(VmRSS, VmHWM)` in KiB: resident memory now and its peak.
pub fn rss_kib() -> (u64, u64) {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The `p`-th percentile (0..=100) of sorted microsecond latencies.
pub fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}
