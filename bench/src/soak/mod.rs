//! `brain-bench soak [--quick] [--calls N] [--concurrency C]`: many calls through the
//! library against the fault-injecting test server (both eras) and the real peers, then a
//! check that nothing was left behind (docs/reliability.md).
//!
//! The servers run here; the calls run in a child process (`soak-side`), so its file
//! descriptors and memory are the library's alone. The soak fails on any session left
//! open, a call that ended other than its scenario says or later than its timeout + 1 s,
//! or file descriptors or memory grown past a small bound.

mod mix;
pub(crate) mod side;

use std::time::Duration;

use brain_tests::peers::{Peer, PeerKind};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

/// File descriptors the calling process may hold more at the end than at the start.
const FD_SLACK: u64 = 8;
/// Resident memory the calling process may have grown by, in KiB (allocator slack, not
/// a leak: a leak of even 1 KiB per call would be 10 MiB over 10 000 calls).
const RSS_SLACK_KIB: u64 = 8 << 10;
/// Longest the calling process may run.
const SIDE_LIMIT: Duration = Duration::from_secs(600);

/// The parsed flags.
struct Flags {
    calls: usize,
    concurrency: usize,
}

fn flags(args: &[String]) -> Result<Flags, String> {
    let mut f = Flags {
        calls: 10_000,
        concurrency: 64,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut number = || -> Result<usize, String> {
            let value = it.next().ok_or(format!("{flag} needs a value"))?;
            value.parse().map_err(|e| format!("{flag}: {e}"))
        };
        match flag.as_str() {
            "--quick" => f.calls = 1_000,
            "--calls" => f.calls = number()?,
            "--concurrency" => f.concurrency = number()?.max(1),
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    Ok(f)
}

/// Runs the soak and judges it.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let f = flags(args)?;
    let handshake = TestServer::start(ServerConfig::new(Era::Handshake));
    let stateless = TestServer::start(ServerConfig::new(Era::Stateless));
    let start = |kind| Peer::start(kind).map_err(|e| format!("starting the {kind} peer: {e}"));
    let (everything, python, rmcp) = (
        start(PeerKind::Everything)?,
        start(PeerKind::PythonSdk)?,
        start(PeerKind::Rmcp)?,
    );
    // A dual-era peer is reached in the handshake era through a second URL (the query is
    // ignored by the server; the client keys its era cache by the URL as written).
    let targets = json!({
        "test-handshake": handshake.url(),
        "test-stateless": stateless.url(),
        "everything": everything.url(),
        "python": python.url(),
        "python-handshake": format!("{}?soak=handshake", python.url()),
        "rmcp": rmcp.url(),
        "rmcp-handshake": format!("{}?soak=handshake", rmcp.url()),
    });
    if let Some(missing) = mix::TARGETS.iter().find(|t| targets.get(**t).is_none()) {
        return Err(format!("the soak plan has no {missing} server"));
    }
    let plan = json!({"calls": f.calls, "concurrency": f.concurrency, "targets": targets});
    let dir = std::env::temp_dir().join(format!("brain-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let plan_path = dir.join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).map_err(|e| e.to_string())?;
    println!(
        "brain-bench soak: {} calls at concurrency {} over {} scenarios; load average {}",
        f.calls,
        f.concurrency,
        mix::mix().len(),
        crate::loadavg()
    );
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let args = vec![
        "soak-side".to_owned(),
        "--plan".to_owned(),
        plan_path.display().to_string(),
    ];
    let report = crate::spawn::side(&exe.display().to_string(), &args, SIDE_LIMIT);
    let _ = std::fs::remove_dir_all(&dir);
    let report = report?;
    let server = handshake.stats();
    let servers = json!({
        "test_sessions_opened": server.sessions_opened.len(),
        "test_sessions_deleted": server.sessions_deleted.len(),
        "test_connections": server.connections + stateless.stats().connections,
    });
    print(&report, &servers);
    let problems = judge(&report, &servers);
    if problems.is_empty() {
        println!("soak: passed");
        Ok(())
    } else {
        Err(format!("soak failed:\n  {}", problems.join("\n  ")))
    }
}

fn print(report: &Value, servers: &Value) {
    println!("{:<24} {:>6}  {:>10}  ends", "scenario", "calls", "slowest");
    for s in report["scenarios"].as_array().into_iter().flatten() {
        let ends = s["ends"].as_object().cloned().unwrap_or_default();
        let calls: u64 = ends.values().filter_map(Value::as_u64).sum();
        let shown: Vec<String> = ends.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "{:<24} {:>6}  {:>7} ms  {}",
            s["name"].as_str().unwrap_or(""),
            calls,
            s["slowest_ms"].as_u64().unwrap_or(0),
            shown.join(", ")
        );
    }
    let (start, end) = (&report["stats"][0], &report["stats"][1]);
    let delta = |key: &str| end[key].as_u64().unwrap_or(0) - start[key].as_u64().unwrap_or(0);
    println!(
        "calls: {} in {:.1} s at concurrency {} (after {} warm-up calls)",
        report["calls"],
        report["seconds"].as_f64().unwrap_or(0.0),
        report["concurrency"],
        report["warmup_calls"]
    );
    println!(
        "sessions (client, whole run): opened {}, DELETEd {}, DELETE failed {}; test server: opened {}, DELETEd {}",
        end["sessions_opened"],
        end["sessions_closed"],
        end["sessions_close_failed"],
        servers["test_sessions_opened"],
        servers["test_sessions_deleted"]
    );
    println!(
        "connections opened during the calls: {} (open at the end: {})",
        delta("connections_opened"),
        end["connections_open"]
    );
    println!(
        "open fds: {} at the start, {} at the end; RSS: {} KiB at the start, {} KiB at the end",
        report["fds"][0], report["fds"][1], report["rss_kib"][0], report["rss_kib"][1]
    );
}

/// Every way the run broke a promise.
fn judge(report: &Value, servers: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for s in report["scenarios"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().unwrap_or("");
        let expect = s["expect"].as_str().unwrap_or("");
        for (end, n) in s["ends"].as_object().into_iter().flatten() {
            if end != expect {
                problems.push(format!("{name}: {n} call(s) ended as {end}, not {expect}"));
            }
        }
        if s["late"].as_u64() != Some(0) {
            problems.push(format!(
                "{name}: {} call(s) ended past timeout + 1 s",
                s["late"]
            ));
        }
    }
    let end = &report["stats"][1];
    let count = |v: &Value| v.as_u64().unwrap_or(u64::MAX);
    if count(&end["sessions_opened"]) != count(&end["sessions_closed"])
        || count(&end["sessions_close_failed"]) != 0
    {
        problems.push(format!("sessions left open: {end}"));
    }
    if servers["test_sessions_opened"] != servers["test_sessions_deleted"] {
        problems.push(format!("the test server still holds sessions: {servers}"));
    }
    if report["flushed"] != true || count(&end["cleanup_running"]) != 0 {
        problems.push("background cleanup did not finish".into());
    }
    let (fd0, fd1) = (count(&report["fds"][0]), count(&report["fds"][1]));
    if fd1 > fd0.saturating_add(FD_SLACK) {
        problems.push(format!("file descriptors grew from {fd0} to {fd1}"));
    }
    let (rss0, rss1) = (count(&report["rss_kib"][0]), count(&report["rss_kib"][1]));
    if rss1 > rss0.saturating_add(RSS_SLACK_KIB) {
        problems.push(format!("RSS grew from {rss0} KiB to {rss1} KiB"));
    }
    problems
}
