//! Printing the sweep: a line per point as it completes, then per case a table, the
//! ratios to the raw floor, to the floor that does the JSON work (`json`) and to rmcp,
//! and the memory figures.

use crate::sweep::Point;

/// Derived per-call figures of one point.
struct Row {
    calls: f64,
    cpu_us: f64,
    p50: f64,
    p99: f64,
    rate: f64,
    req: f64,
    conns: f64,
    peak: f64,
    hwm: f64,
    srv_us: f64,
    errors: f64,
}

fn row(p: &Point) -> Row {
    let calls = p.get("calls").max(1.0);
    Row {
        calls,
        cpu_us: p.get("cpu_s") * 1e6 / calls,
        p50: p.get("p50_us"),
        p99: p.get("p99_us"),
        rate: calls / p.get("wall_s").max(1e-9),
        req: p.get("requests") / calls,
        conns: p.get("accepted"),
        peak: p.get("peak_open"),
        hwm: p.get("rss_hwm_kib"),
        srv_us: p.get("server_cpu_s") * 1e6 / calls,
        errors: p.get("errors"),
    }
}

const HEAD: &str = "case                       C side   calls  cpu/call   p50 us   p99 us  calls/s req/call  conns conn/call  peak  rss KiB srv cpu/call";

/// The line of one point.
fn line(p: &Point) -> String {
    if let Some(e) = p.report.get("failed").and_then(|v| v.as_str()) {
        return format!(
            "{:<24} {:>4} {:<5} FAILED: {e}",
            p.case, p.concurrency, p.side
        );
    }
    let r = row(p);
    let errors = if r.errors > 0.0 {
        format!("  ERRORS {} ({})", r.errors, p.report["first_error"])
    } else {
        String::new()
    };
    format!(
        "{:<24} {:>4} {:<5} {:>6} {:>9.1} {:>8.0} {:>8.0} {:>8.0} {:>8.2} {:>6} {:>9.3} {:>5} {:>8} {:>12.1}{errors}",
        p.case,
        p.concurrency,
        p.side,
        r.calls,
        r.cpu_us,
        r.p50,
        r.p99,
        r.rate,
        r.req,
        r.conns,
        r.conns / r.calls,
        r.peak,
        r.hwm,
        r.srv_us
    )
}

/// Prints a point as soon as it is measured.
pub(crate) fn progress(p: &Point) {
    println!("{}", line(p));
}

/// Prints the column legend.
pub(crate) fn header() {
    println!("{HEAD}");
}

fn find<'a>(points: &'a [Point], case: &str, c: usize, side: &str) -> Option<&'a Point> {
    points.iter().find(|p| {
        p.case == case && p.concurrency == c && p.side == side && p.report.get("failed").is_none()
    })
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".into()
    }
}

/// Prints the per-case tables, ratio lines and memory lines.
pub(crate) fn summary(points: &[Point]) {
    let mut cases: Vec<&str> = points.iter().map(|p| p.case).collect();
    cases.dedup();
    println!(
        "\nsummary (cpu/call and srv cpu/call in µs; conns = new TCP connections the server accepted; peak = most open at once)"
    );
    for case in &cases {
        println!("\n{HEAD}");
        for p in points.iter().filter(|p| p.case == *case) {
            println!("{}", line(p));
        }
    }
    println!("\nratios, same run (ours/raw, ours/json and ours/rmcp; below 1 is better for ours):");
    for case in &cases {
        let mut levels: Vec<usize> = points
            .iter()
            .filter(|p| p.case == *case)
            .map(|p| p.concurrency)
            .collect();
        levels.dedup();
        for c in levels {
            let (Some(ours), Some(raw)) =
                (find(points, case, c, "ours"), find(points, case, c, "raw"))
            else {
                continue;
            };
            let (o, r) = (row(ours), row(raw));
            let rm = find(points, case, c, "rmcp").map(row);
            let vs_json = find(points, case, c, "json").map_or_else(
                || "json -".to_owned(),
                |j| {
                    let j = row(j);
                    format!(
                        "json: cpu {} p50 {} p99 {}",
                        ratio(o.cpu_us, j.cpu_us),
                        ratio(o.p50, j.p50),
                        ratio(o.p99, j.p99)
                    )
                },
            );
            let vs_rmcp = rm.map_or_else(
                || "rmcp -".to_owned(),
                |m| {
                    format!(
                        "rmcp: cpu {} p50 {} p99 {} rss {}",
                        ratio(o.cpu_us, m.cpu_us),
                        ratio(o.p50, m.p50),
                        ratio(o.p99, m.p99),
                        ratio(o.hwm, m.hwm)
                    )
                },
            );
            println!(
                "RATIO {case:<24} C={c:<4} raw: cpu {} p50 {} p99 {} calls/s {} conns {}/{} | {vs_json} | {vs_rmcp}",
                ratio(o.cpu_us, r.cpu_us),
                ratio(o.p50, r.p50),
                ratio(o.p99, r.p99),
                ratio(o.rate, r.rate),
                o.conns,
                r.conns
            );
        }
    }
    memory(points);
}

/// RSS at one call in flight, and per call in flight at the highest concurrency, over
/// HTTP/1.1 and over h2.
fn memory(points: &[Point]) {
    for case in ["handshake-json", "handshake-json-tls-h2"] {
        memory_of(points, case);
    }
}

fn memory_of(points: &[Point], case: &str) {
    let top = points
        .iter()
        .filter(|p| p.case == case)
        .map(|p| p.concurrency)
        .max()
        .unwrap_or(1);
    if top == 1 {
        return;
    }
    println!(
        "\nmemory ({case}): peak RSS at C=1, and (peak at C={top} - peak at C=1) / {top} per call in flight;\n\
         then the same from the resident memory at the end split in two: allocated (anon) and mapped\n\
         files (file: the program's own code and read-only data, shared and reclaimable)"
    );
    for side in ["raw", "json", "ours", "rmcp"] {
        let (Some(one), Some(many)) = (find(points, case, 1, side), find(points, case, top, side))
        else {
            continue;
        };
        let per_call = |key: &str| (many.get(key) - one.get(key)) / top as f64;
        println!(
            "MEMORY {case} {side:<5} rss at C=1 {:>7.0} KiB (anon {:>6.0}, file {:>6.0})   \
             per call in flight at C={top} {:>6.1} KiB (anon {:>6.1})",
            one.get("rss_hwm_kib"),
            one.get("rss_anon_kib"),
            one.get("rss_file_kib"),
            per_call("rss_hwm_kib"),
            per_call("rss_anon_kib"),
        );
    }
}
