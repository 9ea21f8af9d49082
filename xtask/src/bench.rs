//! `cargo xtask bench`: the concurrency sweep (ours, the raw and json floors and rmcp at a
//! host's concurrency, HTTPS, host config load, memory per tenant at 100,000 tenants), then
//! the single-call benchmark and its ratios.
//!
//! `cargo xtask bench [--quick] [--sweep | --call-path] [--only TEXT] [criterion args]...`
//!
//! - The sweep is `brain-bench run` (the `bench/` crate, release build). It builds the rmcp
//!   side (`peers/install.sh rmcp-bench`) on first use and writes every figure to
//!   `target/bench/concurrency.json`. `--quick` runs fewer calls per point and skips the
//!   single-call benchmark; `--only TEXT` keeps the sweep cases whose name contains TEXT
//!   (`--sweep --only tenants`: memory per tenant alone).
//! - The single-call benchmark prints its own paired summary. Afterwards this reads
//!   criterion's estimates for each case and prints the ratio of the two sides' times as a
//!   second, independent view from the same run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cmd;

/// The cases the benchmark measures (criterion group names).
const CASES: &[&str] = &[
    "handshake-json",
    "handshake-sse",
    "stateless-json",
    "stateless-sse",
];

/// Which parts to run, from the command line.
struct Plan {
    quick: bool,
    sweep: bool,
    call_path: bool,
    only: Option<String>,
    criterion: Vec<String>,
}

fn plan(args: &[String]) -> Result<Plan, String> {
    let mut plan = Plan {
        quick: false,
        sweep: true,
        call_path: true,
        only: None,
        criterion: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => plan.quick = true,
            "--sweep" => plan.call_path = false,
            "--call-path" => plan.sweep = false,
            "--only" => plan.only = Some(it.next().ok_or("--only needs a value")?.clone()),
            _ => plan.criterion.push(arg.clone()),
        }
    }
    if plan.quick && plan.sweep {
        plan.call_path = false;
    }
    Ok(plan)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| cmd::project_root().join("target"), PathBuf::from)
}

/// Runs the parts of the benchmark `args` select.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let plan = plan(args)?;
    if plan.sweep {
        sweep(&plan)?;
    }
    if plan.call_path {
        call_path(&plan.criterion)?;
    }
    Ok(())
}

/// The concurrency sweep, with the rmcp side built first.
fn sweep(plan: &Plan) -> Result<(), String> {
    let peers = std::env::var_os("BRAIN_PEERS_DIR")
        .map_or_else(|| target_dir().join("peers"), PathBuf::from);
    let rmcp = peers.join("rmcp-bench/release/rmcp-bench-client");
    let rmcp_text = rmcp.to_string_lossy().into_owned();
    let rmcp_ok = match cmd::run("bash", &["peers/install.sh", "rmcp-bench"], &[]) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("xtask: the rmcp side could not be built, it is left out: {e}");
            false
        }
    };
    let out = target_dir().join("bench");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let json = out.join("concurrency.json").to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        "--release",
        "--locked",
        "-q",
        "-p",
        "brain-bench",
        "--",
        "run",
        "--out",
        json.as_str(),
    ];
    if rmcp_ok {
        args.extend(["--rmcp", rmcp_text.as_str()]);
    }
    if plan.quick {
        args.push("--quick");
    }
    if let Some(only) = &plan.only {
        args.extend(["--only", only.as_str()]);
    }
    cmd::run(&cmd::cargo(), &args, &[])
}

/// The single-call benchmark with `extra` passed through to criterion, then the ratios.
fn call_path(extra: &[String]) -> Result<(), String> {
    let home = target_dir().join("criterion");
    let home_text = home.to_string_lossy().into_owned();
    let mut args = vec![
        "bench",
        "-p",
        "brain-mcp-bind",
        "--bench",
        "call_path",
        "--",
    ];
    args.extend(extra.iter().map(String::as_str));
    cmd::run(
        &cmd::cargo(),
        &args,
        &[("CRITERION_HOME", home_text.as_str())],
    )?;
    print_ratios(&home);
    Ok(())
}

/// Prints ours/raw for every case criterion measured in this run.
fn print_ratios(home: &Path) {
    println!("\ncriterion estimates, ours/raw (same run):");
    for case in CASES {
        let ours = estimate_ns(&home.join(case).join("ours"));
        let raw = estimate_ns(&home.join(case).join("raw"));
        match (ours, raw) {
            (Some(ours), Some(raw)) if raw > 0.0 => println!(
                "  {case:<16} ours {:>8.1} us  raw {:>8.1} us  ratio {:.2}",
                ours / 1e3,
                raw / 1e3,
                ours / raw
            ),
            _ => println!("  {case:<16} (not measured in this run)"),
        }
    }
}

/// The time per iteration, in nanoseconds, of one benchmark's latest run: the slope
/// estimate criterion prints, or the mean when it has no slope.
fn estimate_ns(dir: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join("new").join("estimates.json")).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    json.pointer("/slope/point_estimate")
        .and_then(Value::as_f64)
        .or_else(|| json.pointer("/mean/point_estimate")?.as_f64())
}
