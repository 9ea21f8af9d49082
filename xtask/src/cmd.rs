//! Running child commands with a visible log line and a clear error.

use std::process::Command;
use std::time::Instant;

/// Runs `program args..` in the project root, echoing it first; fails when it exits non-zero.
pub(crate) fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let shown = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("==> {shown}");
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    eprintln!("    ({:.1}s)", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed with {status}"))
    }
}

/// Runs a command and returns its standard output as text.
pub(crate) fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let shown = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(program)
        .args(args)
        .current_dir(project_root())
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{shown}` failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("`{shown}` printed non-UTF-8: {e}"))
}

/// The cargo that runs us, so the pinned toolchain is used throughout.
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The workspace root (the parent of the xtask crate).
pub(crate) fn project_root() -> std::path::PathBuf {
    let manifest = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map(std::path::PathBuf::from)
        .unwrap_or(manifest)
}
