//! `brain-bench soak-side --plan FILE`: the calls of the soak, in a process of its own so
//! that its file descriptors and memory are the library's alone. Prints one JSON report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use brain_mcp_bind::{Era, McpClient, McpExecutor};
use brain_tools_core::{Binding, HostConfig, NoProgress, ToolCall, run_call};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mix::{self, Ending, Scenario};
use crate::measure::rss_kib;

/// How long to wait after a phase for idle pooled connections to close (the pool keeps
/// them 4 s) before counting file descriptors.
const SETTLE: Duration = Duration::from_secs(5);

/// A call may end at most this long after its binding's timeout.
const LATE: Duration = Duration::from_secs(1);

/// One scenario, ready to call.
struct Ready {
    scenario: Scenario,
    binding: Arc<Binding>,
}

/// What the calls of one scenario ended as.
#[derive(Default)]
struct Tally {
    ends: BTreeMap<String, usize>,
    late: usize,
    slowest_ms: u128,
}

/// Runs the soak's calls as the plan says and prints the report.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let [flag, path] = args else {
        return Err("usage: brain-bench soak-side --plan FILE".into());
    };
    if flag != "--plan" {
        return Err(format!("unknown flag {flag:?}"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let plan: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let calls = plan["calls"].as_u64().ok_or("plan: no calls")? as usize;
    let concurrency = plan["concurrency"].as_u64().ok_or("plan: no concurrency")? as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let report = runtime.block_on(soak(&plan["targets"], calls, concurrency))?;
    println!("{report}");
    Ok(())
}

async fn soak(targets: &Value, calls: usize, concurrency: usize) -> Result<Value, String> {
    let client = McpClient::new().map_err(|e| e.to_string())?;
    let mut ready = Vec::new();
    for (i, scenario) in mix::mix().into_iter().enumerate() {
        let url = targets[scenario.target]
            .as_str()
            .ok_or_else(|| format!("plan: no target {}", scenario.target))?;
        if mix::forced_handshake(scenario.target) {
            client.set_era(url, Era::Handshake);
        }
        let entry = mix::binding(&scenario, &format!("s{i}"), url);
        let config = HostConfig::from_value(&json!({"tools": [entry]}))
            .map_err(|e| format!("{}: {e}", scenario.name))?;
        let binding = config.tools()[0].clone();
        ready.push(Ready { scenario, binding });
    }
    let ready = Arc::new(ready);
    let executor = McpExecutor::new(client.clone());
    // Warm up at full concurrency so the pool, the era cache and the allocator reach
    // their working size before the start is measured.
    let warmup = (ready.len() * 4).max(concurrency * 2);
    drive(&ready, &executor, warmup, concurrency).await;
    client.flush(Duration::from_secs(10)).await;
    tokio::time::sleep(SETTLE).await;
    let start = (open_fds(), rss_kib().0, client.stats());
    let started = Instant::now();
    let tallies = drive(&ready, &executor, calls, concurrency).await;
    let elapsed = started.elapsed();
    let flushed = client.flush(Duration::from_secs(10)).await;
    tokio::time::sleep(SETTLE).await;
    let end = (open_fds(), rss_kib().0, client.stats());
    let scenarios: Vec<Value> = ready
        .iter()
        .zip(&tallies)
        .map(|(r, t)| {
            json!({"name": r.scenario.name, "expect": r.scenario.expect, "ends": t.ends,
                   "late": t.late, "slowest_ms": t.slowest_ms as u64})
        })
        .collect();
    let stats = |s: &brain_mcp_bind::ClientStats| {
        json!({"sessions_opened": s.sessions_opened, "sessions_closed": s.sessions_closed,
               "sessions_close_failed": s.sessions_close_failed,
               "cleanup_running": s.cleanup_running,
               "connections_opened": s.connections_opened, "connections_open": s.connections_open})
    };
    Ok(json!({
        "calls": calls, "concurrency": concurrency, "warmup_calls": warmup,
        "seconds": elapsed.as_secs_f64(), "flushed": flushed,
        "fds": [start.0, end.0], "rss_kib": [start.1, end.1],
        "stats": [stats(&start.2), stats(&end.2)],
        "scenarios": scenarios,
    }))
}

/// Makes `calls` calls, `concurrency` at a time, cycling through the scenarios.
async fn drive(
    ready: &Arc<Vec<Ready>>,
    executor: &McpExecutor,
    calls: usize,
    concurrency: usize,
) -> Vec<Tally> {
    let next = Arc::new(AtomicUsize::new(0));
    let tallies: Arc<Vec<Mutex<Tally>>> =
        Arc::new(ready.iter().map(|_| Mutex::default()).collect());
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (ready, executor, next, tallies) = (
            ready.clone(),
            executor.clone(),
            next.clone(),
            tallies.clone(),
        );
        workers.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= calls {
                    return;
                }
                let which = n % ready.len();
                let (end, took) = one(&ready[which], &executor, n).await;
                let limit = ready[which].binding.timeout() + LATE;
                let mut tally = tallies[which]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                *tally.ends.entry(end).or_default() += 1;
                tally.late += usize::from(took > limit);
                tally.slowest_ms = tally.slowest_ms.max(took.as_millis());
            }
        });
    }
    while workers.join_next().await.is_some() {}
    let tallies = Arc::try_unwrap(tallies).unwrap_or_default();
    tallies
        .into_iter()
        .map(|t| t.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect()
}

/// One call: how it ended (`ok`, `tool_error`, `dropped` or an error kind) and how long
/// it took.
async fn one(ready: &Ready, executor: &McpExecutor, n: usize) -> (String, Duration) {
    let s = &ready.scenario;
    let call = ToolCall::new("soak", "soak-session", format!("soak-{n}"), s.args.clone());
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let work = run_call(&ready.binding, call, executor, &NoProgress, &cancel);
    let result = match s.ending {
        Ending::Natural => work.await,
        Ending::Cancel(ms) => {
            let canceller = cancel.clone();
            let timer = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                canceller.cancel();
            });
            let result = work.await;
            timer.abort();
            result
        }
        Ending::Drop(ms) => match tokio::time::timeout(Duration::from_millis(ms), work).await {
            Ok(result) => result,
            Err(_) => return ("dropped".into(), started.elapsed()),
        },
    };
    let end = match (&result.error, result.is_error) {
        (Some(error), _) => error.kind.as_str().to_owned(),
        (None, true) => "tool_error".into(),
        (None, false) => "ok".into(),
    };
    (end, started.elapsed())
}

/// File descriptors this process has open.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}
