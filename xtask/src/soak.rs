//! `cargo xtask soak [--quick] [--calls N] [--concurrency C]`: the soak (`brain-bench
//! soak`, see docs/reliability.md). The full run builds in release; `--quick` (what CI
//! runs) uses the debug build the tests already made, so it costs a link, not a build.

use crate::cmd;

/// Installs the peers the soak calls, then runs it.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    crate::peers::run(&[])?;
    let quick = args.iter().any(|a| a == "--quick");
    let mut cargo_args = vec!["run", "--locked", "-q"];
    if !quick {
        cargo_args.push("--release");
    }
    cargo_args.extend(["-p", "brain-bench", "--", "soak"]);
    cargo_args.extend(args.iter().map(String::as_str));
    cmd::run(&cmd::cargo(), &cargo_args, &[])
}
