//! `cargo xtask peers [everything|python|rmcp]...`: installs the real MCP peers the
//! end-to-end tests use, under `target/peers` (all of them when none is named).
//!
//! The steps live in `peers/install.sh`, which the test harness runs too, so there is
//! one place that knows the pinned versions.

/// Runs the peer installer for the named peers (or all).
pub(crate) fn run(peers: &[String]) -> Result<(), String> {
    let mut args = vec!["peers/install.sh"];
    args.extend(peers.iter().map(String::as_str));
    crate::cmd::run("bash", &args, &[])
}
