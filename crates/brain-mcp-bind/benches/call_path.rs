//! The cost of one MCP tool call: our path against a raw hyper floor, in one run.
//!
//! For each case (handshake era or 2026 stateless era; JSON or SSE replies) one in-process
//! test server is started and two clients call its `echo` tool:
//!
//! - **ours**: `brain_tools_core::run_call` with `McpExecutor`; in the handshake era each
//!   call also waits for its background session `DELETE` (`McpClient::flush`), so both
//!   sides finish all four exchanges inside the measured call;
//! - **raw**: a plain pooled `hyper_util` client replaying the requests our client sent,
//!   recorded byte for byte through a proxy, reading each reply body to its end.
//!
//! Criterion measures each side on its own; then a paired run alternates blocks of calls of
//! the two sides and prints the ratios, CPU time and the server's connection counts.
//! Run it with `cargo xtask bench` (see docs/performance.md).
#![allow(
    missing_docs,
    unreachable_pub,
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic
)] // a benchmark harness: undocumented helpers, and a failed setup ends the run
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)] // timings and counts turned into ratios: the precision lost is far below the noise

#[path = "call_path/capture.rs"]
mod capture;
#[path = "call_path/cpu.rs"]
mod cpu;
#[path = "call_path/ours.rs"]
mod ours;
#[path = "call_path/paired.rs"]
mod paired;
#[path = "call_path/raw.rs"]
mod raw;

use std::time::{Duration, Instant};

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};
use criterion::Criterion;
use tokio::runtime::Runtime;

use crate::capture::Recorder;
use crate::ours::OurClient;
use crate::raw::{Plan, RawClient};

/// One server setup both sides face.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    handshake: bool,
    reply: Reply,
}

const CASES: [Case; 4] = [
    Case {
        name: "handshake-json",
        handshake: true,
        reply: Reply::Json,
    },
    Case {
        name: "handshake-sse",
        handshake: true,
        reply: Reply::Sse,
    },
    Case {
        name: "stateless-json",
        handshake: false,
        reply: Reply::Json,
    },
    Case {
        name: "stateless-sse",
        handshake: false,
        reply: Reply::Sse,
    },
];

/// Rounds of the paired comparison (`CALL_PATH_ROUNDS` overrides; `0` skips it).
const DEFAULT_ROUNDS: usize = 12;

/// A server and both clients for one case.
struct Setup {
    server: TestServer,
    ours: OurClient,
    raw: RawClient,
}

impl Case {
    /// Whether criterion's filter `f` (a substring of `case/side`) selects a side of this case.
    fn selected_by(&self, f: &str) -> bool {
        ["ours", "raw"]
            .iter()
            .any(|side| format!("{}/{side}", self.name).contains(f))
    }

    fn setup(&self, rt: &Runtime) -> Setup {
        let era = if self.handshake {
            Era::Handshake
        } else {
            Era::Stateless
        };
        let server = TestServer::start(ServerConfig {
            fault_tools: false,
            ..ServerConfig::new(era).reply(self.reply)
        });
        let plan = rt.block_on(async {
            let recorder = Recorder::start(server.addr()).await;
            let probe = OurClient::new(&recorder.url(), self.handshake);
            probe.call().await; // a stateless client learns the era here
            recorder.clear();
            probe.call().await;
            let requests = recorder.requests();
            let plan = Plan::from_recording(&requests, self.handshake);
            let roles: Vec<String> = requests.iter().map(capture::Captured::role).collect();
            assert_eq!(
                requests.len(),
                plan.exchanges(),
                "{}: our client sent {roles:?} for one call",
                self.name
            );
            plan
        });
        Setup {
            ours: OurClient::new(&server.url(), self.handshake),
            raw: RawClient::new(&server.url(), plan),
            server,
        }
    }
}

/// Times `iters` calls of `call` on the runtime.
fn timed<F: Future<Output = ()>>(
    rt: &Runtime,
    iters: u64,
    mut call: impl FnMut() -> F,
) -> Duration {
    rt.block_on(async {
        let started = Instant::now();
        for _ in 0..iters {
            call().await;
        }
        started.elapsed()
    })
}

fn criterion_case(c: &mut Criterion, rt: &Runtime, case: &Case) {
    let setup = case.setup(rt);
    let mut group = c.benchmark_group(case.name);
    group.bench_function("ours", |b| {
        b.iter_custom(|iters| timed(rt, iters, || setup.ours.call()));
    });
    group.bench_function("raw", |b| {
        b.iter_custom(|iters| {
            timed(rt, iters, || async {
                std::hint::black_box(setup.raw.call().await);
            })
        });
    });
    group.finish();
}

/// The positional (filter) argument, if any; flags and their values are skipped.
fn filter() -> Option<String> {
    const WITH_VALUE: &[&str] = &[
        "--warm-up-time",
        "--measurement-time",
        "--sample-size",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--profile-time",
        "--output-format",
        "--color",
        "--plotting-backend",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--nresamples",
        "--format",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return Some(arg);
        }
    }
    None
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args();
    let filter = filter();
    let cases: Vec<&Case> = CASES
        .iter()
        .filter(|case| filter.as_deref().is_none_or(|f| case.selected_by(f)))
        .collect();
    for case in &cases {
        criterion_case(&mut c, &rt, case);
    }
    c.final_summary();

    let rounds = std::env::var("CALL_PATH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS);
    if !cpu::Cpu::available() {
        println!("note: /proc/self/task/*/schedstat is not readable here; CPU columns read 0");
    }
    let mut outcomes = Vec::new();
    for case in cases.iter().filter(|_| rounds > 0) {
        let setup = case.setup(&rt);
        outcomes.push(paired::compare(
            case.name,
            &rt,
            &setup.server,
            &setup.ours,
            &setup.raw,
            rounds,
        ));
    }
    paired::print(&outcomes, rounds);
}
