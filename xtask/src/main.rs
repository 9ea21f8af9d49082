//! `cargo xtask`: the project's automation, in Rust so a fresh machine needs only cargo.
//!
//! Subcommands:
//! - `bench`: the concurrency sweep (ours, raw hyper, rmcp) and the single-call benchmark.
//! - `tidy`: file size, allows with a reason, no unused dependencies.
//! - `soak`: 10 000 calls at concurrency 64 against faults and peers; fails on leaks.
//! - `ci`: everything CI checks (format, clippy, rustdoc, architecture, tests, conformance, interop).
//! - `demo`: discovery and calls against the bundled demo server, in both protocol eras.
//! - `fuzz`: seeds, builds (nightly) and runs every fuzz target for a while; see `fuzz/README.md`.
//! - `peers`: installs the real MCP peer servers the end-to-end tests use.
//! - `conformance`: the official MCP conformance suite's client scenarios.
//! - `postgres`: starts a Postgres under target/ for the token store's tests, until Enter.
//! - `interop`: mcp-tools and mcp-call against the real peers in each era; writes docs/interop.md.

mod arch;
mod bench;
mod ci;
mod cmd;
mod conformance;
mod demo;
mod fuzz;
mod guard;
mod interop;
mod peers;
mod postgres;
mod soak;
mod tidy;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(),
        Some("arch") => arch::run(),
        Some("tidy") => tidy::run(),
        Some("guard") => guard::run(),
        Some("bench") => bench::run(&args[1..]),
        Some("demo") => demo::run(),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("peers") => peers::run(&args[1..]),
        Some("interop") => interop::run(),
        Some("postgres") => postgres::run(),
        Some("soak") => soak::run(&args[1..]),
        Some("conformance") => conformance::run(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown subcommand `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <command>

commands:
  bench   concurrency sweep (ours, raw hyper, rmcp; HTTPS; config load), then the single-call
          benchmark [--quick] [--sweep|--call-path] [--only TEXT] [criterion args]...
  ci      fmt, architecture, clippy -D warnings, rustdoc -D warnings, fuzz type-check, tests, soak --quick, guard, conformance, interop
  arch    the architecture check alone (which crates may depend on which)
  tidy    house rules: file size, allows with reasons, no unused dependencies
  guard   instructions per call (callgrind) against bench/instructions.baseline, +10% at most
  demo    the main job on the bundled demo server: discover its tools, call them, show the events
  fuzz    run the fuzz targets (needs a nightly toolchain) for SECONDS each [SECONDS [TARGET]...], default 60 s, all
  soak    10 000 calls at concurrency 64 (faults, peers, both eras); fails on sessions left
          open, late calls, fd or RSS growth [--quick] [--calls N] [--concurrency C]
  postgres  start a Postgres under target/postgres for the token store's tests; prints
          BRAIN_TEST_POSTGRES_URL=..., stops on Enter
  peers   install the real MCP peer servers under target/peers [everything|python|rmcp]...
  interop mcp-tools + mcp-call against the real peers in each era; writes docs/interop.md
  conformance  the MCP conformance suite's client scenarios [FILTER]... (installs under target/conformance)";
