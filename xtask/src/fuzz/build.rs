//! Finding a nightly toolchain and building the fuzz targets with libFuzzer's
//! instrumentation, the way `cargo fuzz build` would, without needing cargo-fuzz.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The flags cargo-fuzz passes: SanitizerCoverage feeding libFuzzer (edge counters, the PC
/// table, comparison tracing), `cfg(fuzzing)`, checked arithmetic and debug assertions, and
/// AddressSanitizer for the unsafe code inside dependencies.
const RUSTFLAGS: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "--cfg",
    "fuzzing",
    "-Cdebug-assertions",
    "-Coverflow-checks",
    "-Zsanitizer=address",
];

/// The first installed nightly toolchain, as rustup names it; `None` without rustup or
/// without a nightly. Only lists toolchains, so nothing is ever installed.
pub(crate) fn nightly() -> Option<String> {
    let out = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    first_nightly(&String::from_utf8_lossy(&out.stdout))
}

/// The first `nightly…` entry of `rustup toolchain list` output.
pub(crate) fn first_nightly(listing: &str) -> Option<String> {
    listing
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .find(|name| name.starts_with("nightly"))
        .map(str::to_owned)
}

/// A nightly toolchain to build with.
pub(crate) struct Nightly {
    name: String,
    host: String,
}

impl Nightly {
    /// Asks the toolchain `name` for its host target.
    pub(crate) fn new(name: String) -> Result<Self, String> {
        let out = rustup(&name, "rustc")
            .arg("-vV")
            .output()
            .map_err(|e| format!("cannot run rustc of {name}: {e}"))?;
        let info = String::from_utf8_lossy(&out.stdout);
        let host = info
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .ok_or_else(|| format!("`rustc -vV` of {name} names no host"))?;
        Ok(Self {
            name,
            host: host.trim().to_owned(),
        })
    }

    /// Builds every fuzz target in release mode into `fuzz/target/<host>/release/`.
    ///
    /// The explicit `--target` keeps the instrumentation off build scripts and proc
    /// macros, as cargo-fuzz does.
    pub(crate) fn build(&self, root: &Path) -> Result<(), String> {
        let fuzz = root.join("fuzz");
        let mut command = rustup(&self.name, "cargo");
        command
            .args([
                "build",
                "--release",
                "--locked",
                "--bins",
                "--manifest-path",
            ])
            .arg(fuzz.join("Cargo.toml"))
            .arg("--target")
            .arg(&self.host)
            .arg("--target-dir")
            .arg(fuzz.join("target"))
            .env("RUSTFLAGS", RUSTFLAGS.join(" "))
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            .current_dir(root);
        eprintln!(
            "==> {} (RUSTFLAGS: {})",
            shown(&command),
            RUSTFLAGS.join(" ")
        );
        let started = Instant::now();
        let status = command
            .status()
            .map_err(|e| format!("cannot start the fuzz build: {e}"))?;
        eprintln!("    ({:.1}s)", started.elapsed().as_secs_f64());
        if status.success() {
            Ok(())
        } else {
            Err(format!("the fuzz build failed with {status}"))
        }
    }

    /// The built binary of fuzz target `target`.
    pub(crate) fn binary(&self, root: &Path, target: &str) -> PathBuf {
        root.join("fuzz/target")
            .join(&self.host)
            .join("release")
            .join(target)
    }
}

/// `rustup run <toolchain> <program>`: the toolchain wins over `rust-toolchain.toml` and
/// over the `RUSTUP_TOOLCHAIN` our own cargo runs under.
fn rustup(toolchain: &str, program: &str) -> Command {
    let mut command = Command::new("rustup");
    command.args(["run", toolchain, program]);
    command
}

fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}
