//! The concurrency sweep: for each case (era, reply framing, HTTP or HTTPS) one test
//! server, and for each concurrency every side in a process of its own against it. The
//! server counts connections and requests; each side reports its CPU, memory and latency.

use std::path::{Path, PathBuf};
use std::time::Duration;

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::capture::Recorder;
use crate::ours::Ours;
use crate::spawn;

/// One server setup every side faces.
#[derive(Clone, Copy)]
pub(crate) struct Case {
    /// Its name in tables.
    pub(crate) name: &'static str,
    /// Handshake era (sessions) or 2026 stateless.
    pub(crate) handshake: bool,
    /// Reply framing.
    pub(crate) reply: Reply,
    /// HTTPS with these ALPN protocols offered by the server; plain HTTP when `None`.
    pub(crate) alpn: Option<&'static [&'static [u8]]>,
}

const fn case(name: &'static str, handshake: bool, reply: Reply) -> Case {
    Case {
        name,
        handshake,
        reply,
        alpn: None,
    }
}

impl Case {
    /// Whether the server offers h2 (every side then carries all calls on one connection).
    pub(crate) fn is_h2(&self) -> bool {
        self.alpn
            .is_some_and(|alpn| alpn.first() == Some(&&b"h2"[..]))
    }

    /// The test server's era for this case.
    pub(crate) fn era(&self) -> Era {
        if self.handshake {
            Era::Handshake
        } else {
            Era::Stateless
        }
    }

    /// The era as the sides' `--era` flag names it.
    pub(crate) fn era_flag(&self) -> &'static str {
        if self.handshake {
            "handshake"
        } else {
            "stateless"
        }
    }
}

/// The plain-HTTP cases of the sweep.
pub(crate) const CASES: [Case; 4] = [
    case("handshake-json", true, Reply::Json),
    case("handshake-sse", true, Reply::Sse),
    case("stateless-json", false, Reply::Json),
    case("stateless-sse", false, Reply::Sse),
];

/// The HTTPS cases: the same CA for every side, given as an extra root.
pub(crate) const TLS_CASES: [Case; 2] = [
    Case {
        name: "handshake-json-tls-http1",
        handshake: true,
        reply: Reply::Json,
        alpn: Some(&[b"http/1.1"]),
    },
    Case {
        name: "handshake-json-tls-h2",
        handshake: true,
        reply: Reply::Json,
        alpn: Some(&[b"h2", b"http/1.1"]),
    },
];

/// What the driver knows how to run.
pub(crate) struct Setup {
    /// This program, for the `side` subcommand.
    pub(crate) exe: String,
    /// The rmcp client, when built.
    pub(crate) rmcp: Option<String>,
    /// Where the plan and CA files go.
    pub(crate) dir: PathBuf,
    /// The CA's PEM file and the generated PKI.
    pub(crate) pki: crate::pki::Pki,
    /// Extra flags for our side (to compare client settings).
    pub(crate) ours_flags: Vec<String>,
    /// Sides to run (a subset of raw, ours, rmcp).
    pub(crate) sides: Vec<&'static str>,
    /// Each side's calls at one concurrency are split into this many blocks, run
    /// alternating with the other sides' (each block a process of its own), so load on
    /// the machine falls on every side alike; a side's figures are its blocks' together.
    pub(crate) blocks: usize,
}

/// One side at one concurrency: its own report plus what the server saw.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    pub(crate) case: &'static str,
    pub(crate) concurrency: usize,
    pub(crate) side: &'static str,
    /// The side's report, with the server's figures added.
    pub(crate) report: Value,
}

impl Point {
    /// A number from the report (0 when absent).
    pub(crate) fn get(&self, key: &str) -> f64 {
        self.report.get(key).and_then(Value::as_f64).unwrap_or(0.0)
    }
}

/// Calls per side at concurrency `c`.
pub(crate) fn calls_for(c: usize, quick: bool) -> usize {
    if quick {
        (4 * c).clamp(1000, 4000)
    } else {
        (16 * c).clamp(3000, 16_000)
    }
}

/// Starts the server of `case`.
fn server(case: &Case, setup: &Setup) -> Result<TestServer, String> {
    let tls = match case.alpn {
        Some(alpn) => Some(setup.pki.server_config(alpn)?),
        None => None,
    };
    start(case, tls)
}

/// Starts a measured server for `case` (it keeps no requests), over TLS when `tls` is
/// given.
pub(crate) fn start(
    case: &Case,
    tls: Option<std::sync::Arc<rustls::ServerConfig>>,
) -> Result<TestServer, String> {
    TestServer::try_start(ServerConfig {
        fault_tools: false,
        keep_requests: false,
        tls,
        ..ServerConfig::new(case.era()).reply(case.reply)
    })
    .map_err(|e| e.to_string())
}

/// Records the requests our client sends for one call on a plain-HTTP twin of the case.
pub(crate) fn record_plan(case: &Case, path: &Path) -> Result<(), String> {
    let plain = TestServer::try_start(ServerConfig {
        fault_tools: false,
        ..ServerConfig::new(case.era()).reply(case.reply)
    })
    .map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let bytes = rt.block_on(async {
        let recorder = Recorder::start(plain.addr())
            .await
            .map_err(|e| e.to_string())?;
        let ours = std::sync::Arc::new(Ours::new(&recorder.url(), case.handshake, None, |_| {})?);
        ours.clone().call().await?; // a stateless client learns the era here
        ours.finish().await;
        recorder.clear();
        ours.clone().call().await?;
        ours.finish().await;
        Ok::<_, String>(recorder.bytes())
    })?;
    std::fs::write(path, bytes).map_err(|e| e.to_string())
}

/// Runs every side of `case` at each concurrency; sides that fail are reported and skipped.
pub(crate) fn run_case(
    case: &Case,
    levels: &[usize],
    quick: bool,
    setup: &Setup,
) -> Result<Vec<Point>, String> {
    let plan = setup.dir.join(format!("{}.plan", case.name));
    record_plan(case, &plan)?;
    let ca = setup.dir.join("ca.pem");
    std::fs::write(&ca, &setup.pki.ca_pem).map_err(|e| e.to_string())?;
    let server = server(case, setup)?;
    let mut points = Vec::new();
    for (round, &c) in levels.iter().enumerate() {
        let blocks = setup.blocks.max(1);
        let calls = calls_for(c, quick).div_ceil(blocks).max(1);
        let mut reports: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for block in 0..blocks {
            let mut sides = setup.sides.clone();
            let n = sides.len().max(1);
            sides.rotate_left((round + block) % n); // no side always goes first
            for side in sides {
                let mut args: Vec<String> = Vec::new();
                let program = match side {
                    "rmcp" => match &setup.rmcp {
                        Some(p) => p.clone(),
                        None => continue,
                    },
                    _ => {
                        args.extend(["side".into(), "--side".into(), side.into()]);
                        args.extend(["--plan".into(), plan.display().to_string()]);
                        if side == "ours" {
                            args.extend(setup.ours_flags.iter().cloned());
                        }
                        setup.exe.clone()
                    }
                };
                args.extend([
                    "--url".into(),
                    server.url(),
                    "--era".into(),
                    case.era_flag().into(),
                ]);
                args.extend([
                    "--concurrency".into(),
                    c.to_string(),
                    "--calls".into(),
                    calls.to_string(),
                ]);
                if case.alpn.is_some() {
                    args.extend(["--ca".into(), ca.display().to_string()]);
                }
                // Connections of the side before are closed once its process is gone.
                server.wait_until(Duration::from_secs(5), |_| server.counters().open == 0);
                server.reset_peak_open();
                let before = server.counters();
                let cpu_before = spawn::server_cpu_ns();
                let limit = Duration::from_secs(30 + (calls as u64) / 50);
                let (program, args) = wrapped(program, args, (case.name, side, c, block));
                let report = spawn::side(&program, &args, limit);
                let after = server.counters();
                let srv_ns = spawn::server_cpu_ns().saturating_sub(cpu_before);
                let mut report = match report {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("  {} C={c} {side}: {e}", case.name);
                        json!({"side": side, "failed": e})
                    }
                };
                if let Some(obj) = report.as_object_mut() {
                    obj.insert("accepted".into(), json!(after.accepted - before.accepted));
                    obj.insert("requests".into(), json!(after.requests - before.requests));
                    obj.insert("deletes".into(), json!(after.deletes - before.deletes));
                    obj.insert("peak_open".into(), json!(after.peak_open));
                    obj.insert("server_cpu_s".into(), json!(srv_ns as f64 / 1e9));
                }
                match reports.iter_mut().find(|(s, _)| *s == side) {
                    Some((_, all)) => all.push(report),
                    None => reports.push((side, vec![report])),
                }
            }
        }
        for (side, blocks) in reports {
            let point = Point {
                case: case.name,
                concurrency: c,
                side,
                report: merge(blocks),
            };
            crate::table::progress(&point);
            points.push(point);
        }
    }
    Ok(points)
}

/// One side's blocks at one concurrency as one report: counts and times added up, peaks
/// and connections (each block opens its own) the largest, memory the block's that peaked
/// highest (its base and peak belong together), latency percentiles the median of the
/// blocks'. A block that failed makes the whole point failed.
fn merge(mut blocks: Vec<Value>) -> Value {
    if blocks.len() == 1 {
        return blocks.pop().unwrap_or(Value::Null);
    }
    if let Some(failed) = blocks.iter().find(|b| b.get("failed").is_some()) {
        return failed.clone();
    }
    let number = |b: &Value, key: &str| b.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let peak = blocks
        .iter()
        .max_by(|a, b| number(a, "rss_hwm_kib").total_cmp(&number(b, "rss_hwm_kib")))
        .cloned()
        .unwrap_or(Value::Null);
    let mut merged = blocks.first().cloned().unwrap_or(Value::Null);
    let Some(obj) = merged.as_object_mut() else {
        return merged;
    };
    for (key, value) in obj.iter_mut() {
        let values: Vec<f64> = blocks.iter().map(|b| number(b, key)).collect();
        if !value.is_number() {
            continue;
        }
        *value = match key.as_str() {
            "calls" | "cpu_s" | "cpu_ticks_s" | "wall_s" | "errors" | "requests" | "deletes"
            | "server_cpu_s" => json!(values.iter().sum::<f64>()),
            k if k.starts_with("rss_") => json!(number(&peak, k)),
            k if k.starts_with("p") && k.ends_with("_us") => {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                json!(sorted[sorted.len() / 2])
            }
            _ => json!(values.iter().copied().fold(f64::MIN, f64::max)),
        };
    }
    obj.insert("blocks".into(), json!(blocks.len()));
    merged
}

/// The variable naming a command that runs each side process (a profiler, say):
/// whitespace-separated words, where `{case}`, `{side}`, `{c}` and `{block}` stand for
/// the point, e.g. `perf stat -x, -o /tmp/{case}-{side}-{c}-{block}.csv --`.
pub(crate) const SIDE_PREFIX_VAR: &str = "BRAIN_BENCH_SIDE_PREFIX";

/// `program args` behind the command [`SIDE_PREFIX_VAR`] names, if any.
fn wrapped(
    program: String,
    args: Vec<String>,
    (case, side, c, block): (&str, &str, usize, usize),
) -> (String, Vec<String>) {
    let Ok(prefix) = std::env::var(SIDE_PREFIX_VAR) else {
        return (program, args);
    };
    let fill = |word: &str| {
        word.replace("{case}", case)
            .replace("{side}", side)
            .replace("{c}", &c.to_string())
            .replace("{block}", &block.to_string())
    };
    let mut words = prefix.split_whitespace().map(fill);
    let Some(first) = words.next() else {
        return (program, args);
    };
    let rest = words.chain(std::iter::once(program)).chain(args).collect();
    (first, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_add_up_counts_and_keep_peaks() {
        let blocks = vec![
            json!({"side": "ours", "calls": 100, "cpu_s": 1.0, "wall_s": 2.0, "p50_us": 10,
                   "rss_hwm_kib": 500, "accepted": 17}),
            json!({"side": "ours", "calls": 100, "cpu_s": 3.0, "wall_s": 2.0, "p50_us": 30,
                   "rss_hwm_kib": 700, "accepted": 17}),
            json!({"side": "ours", "calls": 100, "cpu_s": 2.0, "wall_s": 2.0, "p50_us": 20,
                   "rss_hwm_kib": 600, "accepted": 17}),
        ];
        let merged = merge(blocks);
        assert_eq!(merged["calls"], json!(300.0));
        assert_eq!(merged["cpu_s"], json!(6.0));
        assert_eq!(merged["p50_us"], json!(20.0));
        assert_eq!(merged["rss_hwm_kib"], json!(700.0));
        assert_eq!(merged["accepted"], json!(17.0));
        assert_eq!(merged["side"], json!("ours"));
        assert_eq!(merged["blocks"], json!(3));
        let failed = merge(vec![json!({"calls": 1}), json!({"failed": "boom"})]);
        assert_eq!(failed["failed"], json!("boom"));
    }
}
