//! `cargo xtask bench`: the call-path benchmark, then its ratios against the raw floor.
//!
//! The benchmark prints its own paired summary (the headline ratios). Afterwards this reads
//! criterion's estimates for each case and prints the ratio of the two sides' times as a
//! second, independent view from the same run.

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

/// Runs the benchmark with `extra` passed through to it, then prints the ratios.
pub(crate) fn run(extra: &[String]) -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| crate::project_root().join("target"), PathBuf::from);
    let home = target.join("criterion");
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
        &crate::ci::cargo(),
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
