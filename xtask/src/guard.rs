//! The performance guard in `cargo xtask ci`: instructions per call at one call in
//! flight, ours over the json floor (`brain-bench instructions`), against the figures
//! recorded in `bench/instructions.baseline`. Instructions under callgrind repeat to
//! within a fraction of a percent on a shared machine, so a 10% rise is a real one.

use crate::cmd;

/// How far a ratio may rise above its recorded figure.
const TOLERANCE: f64 = 1.10;
/// Calls per side and run: enough for a steady per-call figure in a debug build.
const CALLS: &str = "100";
/// The recorded figures, relative to the project root.
const BASELINE: &str = "bench/instructions.baseline";

/// Measures and compares; fails naming every case over its bound.
pub(crate) fn run() -> Result<(), String> {
    let cargo = cmd::cargo();
    eprintln!("==> instructions per call under callgrind (brain-bench instructions)");
    let out = cmd::output(
        &cargo,
        &[
            "run",
            "--locked",
            "-q",
            "-p",
            "brain-bench",
            "--",
            "instructions",
            "--calls",
            CALLS,
        ],
    )?;
    let path = cmd::project_root().join(BASELINE);
    let recorded = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let failures = compare(&recorded, &out)?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "instructions per call rose more than 10% ({BASELINE}):\n  {}",
            failures.join("\n  ")
        ))
    }
}

/// Every case of `recorded` checked against `measured` (the `INSTRUCTIONS` lines); a
/// case recorded but not measured is a failure too.
fn compare(recorded: &str, measured: &str) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    for line in recorded.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(case), Some(ratio)) = (fields.next(), fields.next()) else {
            return Err(format!("{BASELINE}: cannot read {line:?}"));
        };
        let bound: f64 = ratio
            .parse()
            .map_err(|e| format!("{BASELINE}: {case}: ratio {ratio:?}: {e}"))?;
        let Some(now) = measured_ratio(measured, case) else {
            failures.push(format!("{case}: not measured"));
            continue;
        };
        eprintln!("    {case}: ours/json {now:.2} (recorded {bound:.2})");
        if now > bound * TOLERANCE {
            failures.push(format!("{case}: ours/json {now:.2}, recorded {bound:.2}"));
        }
    }
    Ok(failures)
}

/// The ratio of `case` in the `INSTRUCTIONS case=.. ours=.. json=..` lines.
fn measured_ratio(measured: &str, case: &str) -> Option<f64> {
    let line = measured
        .lines()
        .find(|l| l.starts_with("INSTRUCTIONS") && l.contains(&format!("case={case} ")))?;
    let field = |name: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.parse().ok())
    };
    Some(field("ours=")? / field("json=")?.max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: &str = "# comment\nhandshake-json 1.28 1418000\nstateless-json 1.32 580000\n";

    #[test]
    fn within_and_over_the_bound() {
        let ok = "INSTRUCTIONS case=handshake-json ours=1400 json=1000 ratio=1.40\n\
                  INSTRUCTIONS case=stateless-json ours=1320 json=1000 ratio=1.32\n";
        assert_eq!(compare(RECORDED, ok).unwrap(), Vec::<String>::new());
        let over = "INSTRUCTIONS case=handshake-json ours=1420 json=1000 ratio=1.42\n";
        let failures = compare(RECORDED, over).unwrap();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].starts_with("handshake-json: ours/json 1.42"));
        assert_eq!(failures[1], "stateless-json: not measured");
    }

    #[test]
    fn a_broken_baseline_is_an_error() {
        assert!(compare("handshake-json\n", "").is_err());
        assert!(compare("handshake-json x\n", "").is_err());
    }
}
