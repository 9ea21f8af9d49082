//! `cargo xtask fuzz [SECONDS] [TARGET]...`: writes the seed corpora, builds every fuzz
//! target with a nightly toolchain and libFuzzer's instrumentation, and runs each (or only
//! the TARGETs named) for SECONDS (default 60), one after the other. No cargo-fuzz needed:
//! `libfuzzer-sys` bundles libFuzzer.
//!
//! Corpora grow in `fuzz/corpus/<target>/` across runs, crash inputs land in
//! `fuzz/artifacts/<target>/` and each run's output in `fuzz/target/logs/<target>.log`
//! (all ignored by git). Without a nightly toolchain the command fails and says so.
//! `cargo xtask ci` only type-checks the targets on stable.

mod build;
mod fixtures;
mod libfuzzer;
mod seeds;
mod sse;
#[cfg(test)]
mod tests;

use std::path::Path;

use build::Nightly;
use libfuzzer::{Row, TABLE_HEADER};

/// Every fuzz target (`fuzz/fuzz_targets/<name>.rs`).
pub(crate) const TARGETS: &[&str] = &["decode", "sse", "host_config", "convert", "header_value"];
/// Seconds per target when none are given.
const DEFAULT_SECONDS: u64 = 60;

/// `cargo xtask fuzz [SECONDS] [TARGET]...`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let (seconds, targets) = parse_args(args)?;
    let Some(toolchain) = build::nightly() else {
        return Err(
            "cargo xtask fuzz needs a nightly toolchain (libFuzzer's instrumentation \
             and AddressSanitizer are nightly-only), and `rustup toolchain list` shows none \
             (or rustup is not on PATH); install one with `rustup toolchain install nightly`"
                .into(),
        );
    };
    fuzz_all(toolchain, seconds, &targets)
}

/// SECONDS (or the default) and the targets named after it (or all of them).
fn parse_args(args: &[String]) -> Result<(u64, Vec<&'static str>), String> {
    let Some((first, names)) = args.split_first() else {
        return Ok((DEFAULT_SECONDS, TARGETS.to_vec()));
    };
    let seconds = match first.parse::<u64>() {
        Ok(s) if s > 0 => s,
        _ => {
            return Err(format!(
                "SECONDS must be a whole number above 0, not `{first}`"
            ));
        }
    };
    let mut targets = Vec::new();
    for name in names {
        match TARGETS.iter().find(|t| *t == name) {
            Some(target) => targets.push(*target),
            None => {
                return Err(format!(
                    "no fuzz target `{name}`; the targets are {}",
                    TARGETS.join(", ")
                ));
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    Ok((seconds, targets))
}

/// Seeds, builds and runs `targets`, then prints one table of results.
fn fuzz_all(toolchain: String, seconds: u64, targets: &[&'static str]) -> Result<(), String> {
    let root = crate::cmd::project_root();
    let fuzz = root.join("fuzz");
    eprintln!("xtask fuzz: {toolchain}, {seconds} s per target");
    for seeds in seeds::all(&root, targets)? {
        seeds.write(&fuzz.join("corpus").join(seeds.target))?;
        eprintln!("    {} seeds for {}", seeds.inputs.len(), seeds.target);
    }
    let nightly = Nightly::new(toolchain)?;
    nightly.build(&root)?;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for target in targets {
        eprintln!("==> fuzz {target} for {seconds} s");
        let outcome = libfuzzer::run(
            &nightly.binary(&root, target),
            seconds,
            &fuzz.join("corpus").join(target),
            &fuzz.join("artifacts").join(target),
            &fuzz.join("target/logs").join(format!("{target}.log")),
        )?;
        rows.push(Row(target, &outcome.summary).to_string());
        if let Some(failure) = &outcome.failure {
            eprintln!("    {target} FAILED ({})", display(&outcome.log));
            failures.push(format!("{target}: {failure}"));
        }
    }
    println!("\n{TABLE_HEADER}\n{}", rows.join("\n"));
    if failures.is_empty() {
        eprintln!("xtask fuzz: no target failed");
        Ok(())
    } else {
        Err(format!(
            "{} fuzz target(s) failed:\n{}",
            failures.len(),
            failures.join("\n\n")
        ))
    }
}

fn display(path: &Path) -> String {
    path.strip_prefix(crate::cmd::project_root())
        .unwrap_or(path)
        .display()
        .to_string()
}
