//! `cargo xtask ci`: the whole check, as CI runs it on a fresh clone: format, architecture,
//! house rules, clippy, rustdoc, packaging the library crates, the fuzz targets' type-check,
//! every test once, the short soak, the instructions-per-call guard, the conformance suite
//! and interop. The token store's tests run against a Postgres it starts under `target/`
//! (`crate::postgres`). Fuzzing itself (`cargo xtask fuzz`) is not part of it: its
//! instrumented nightly build alone takes longer than the rest of CI.

use crate::cmd;

/// Runs every check in order, stopping at the first failure.
pub(crate) fn run() -> Result<(), String> {
    let cargo = cmd::cargo();
    cmd::run(&cargo, &["fmt", "--all", "--check"], &[])?;
    crate::arch::run()?;
    crate::tidy::run()?;
    cmd::run(
        &cargo,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    // The Postgres token store is behind a feature the workspace build leaves off.
    cmd::run(
        &cargo,
        &[
            "clippy",
            "-p",
            "brain-mcp-bind",
            "--features",
            "postgres",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    cmd::run(
        &cargo,
        &["doc", "--workspace", "--no-deps", "--locked"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The library crates are packages a service can depend on: each packs with its
    // metadata and builds from its own package (the test harness, benchmark, runner and
    // xtask are the workspace's tools, never published). Earlier packages of the same
    // version are removed first: cargo would verify against their stale sources.
    forget_packages();
    cmd::run(
        &cargo,
        &[
            "package",
            "--workspace",
            "--exclude",
            "brain-tests",
            "--exclude",
            "brain-bench",
            "--exclude",
            "brain-conformance",
            "--exclude",
            "xtask",
            "--locked",
            "--allow-dirty",
            "--target-dir",
            &path_of(&package_target()),
        ],
        &[],
    )?;
    // The fuzz targets live in their own workspace (running them needs nightly); here CI
    // only makes sure they still compile on stable against the current APIs.
    cmd::run(
        &cargo,
        &["check", "--locked", "--manifest-path", "fuzz/Cargo.toml"],
        &[],
    )?;
    // Every test runs once. Each library crate is tested on its own, with only the
    // features it asks for (a workspace build unifies features and could hide a missing
    // one); then the end-to-end suites, the conformance runner, xtask and the benchmark's own
    // tests together.
    for package in CRATES {
        cmd::run(&cargo, &["test", "--locked", "-q", "-p", package], &[])?;
    }
    // The token store against a real Postgres started here (CI fails if it cannot
    // start): the store's contract, and mcp-call processes sharing one grant.
    {
        let postgres = crate::postgres::start()?;
        let envs = [
            (crate::postgres::URL_VAR, postgres.url.as_str()),
            ("BRAIN_REQUIRE_POSTGRES", "1"),
            // The fleet hammers one grant for the minute issue 39 asks for; the other
            // fleet tests (the killed holder's lease, 30 s) run beside it.
            ("BRAIN_FLEET_SECONDS", "60"),
        ];
        cmd::run(
            &cargo,
            &[
                "test",
                "--locked",
                "-q",
                "-p",
                "brain-mcp-bind",
                "--features",
                "postgres",
                "--lib",
                "--test",
                "postgres_store",
                "--test",
                "fleet",
            ],
            &envs,
        )?;
    }
    // The library without its programs builds with the features it asks for (no signal
    // handling, no log formatting): what a service embedding it gets.
    cmd::run(
        &cargo,
        &[
            "check",
            "--locked",
            "-q",
            "-p",
            "brain-mcp-bind",
            "--no-default-features",
            "--lib",
        ],
        &[],
    )?;
    // The one optional feature with code of its own: the OpenTelemetry trace context.
    cmd::run(
        &cargo,
        &[
            "test",
            "--locked",
            "-q",
            "-p",
            "brain-tools-core",
            "--features",
            "opentelemetry",
            "--lib",
            "trace",
        ],
        &[],
    )?;
    // Validation that judges numbers exactly, behind its opt-in feature.
    cmd::run(
        &cargo,
        &[
            "test",
            "--locked",
            "-q",
            "-p",
            "brain-tools-core",
            "--features",
            "exact-numbers",
            "--lib",
        ],
        &[],
    )?;
    embedder(&cargo)?;
    // The examples are programs the end-to-end tests run; build them first so the
    // tests find them ready.
    cmd::run(
        &cargo,
        &[
            "build",
            "--locked",
            "-q",
            "-p",
            "brain-mcp-bind",
            "--examples",
        ],
        &[],
    )?;
    cmd::run(
        &cargo,
        &[
            "test",
            "--locked",
            "-q",
            "-p",
            "brain-tests",
            "-p",
            "brain-conformance",
            "-p",
            "xtask",
            "-p",
            "brain-bench",
        ],
        &[],
    )?;
    // The short soak: 1,000 calls at concurrency 64 leave no session, fd or memory behind.
    crate::soak::run(&["--quick".to_owned()])?;
    // Instructions per call must not rise more than 10% over the recorded figures.
    crate::guard::run()?;
    // Interoperability, judged by others' code: the official conformance suite against a
    // client built on our crates, then our two programs against the real peer servers.
    crate::conformance::run(&[])?;
    crate::interop::run()?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// A service outside the workspace (its own lockfile and features) depending on our
/// crates as the README says: its serde types holding `f64`s still deserialize, and the
/// examples build with the README's dependency lines alone. It shares the workspace's
/// target directory, so what it has in common with the workspace is built once.
fn embedder(cargo: &str) -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || cmd::project_root().join("target"),
        std::path::PathBuf::from,
    );
    let target = path_of(&target);
    let envs = [("CARGO_TARGET_DIR", target.as_str())];
    let manifest = "tests/embedder/Cargo.toml";
    cmd::run(
        cargo,
        &[
            "test",
            "--locked",
            "-q",
            "--manifest-path",
            manifest,
            "--workspace",
        ],
        &envs,
    )?;
    cmd::run(
        cargo,
        &[
            "build",
            "--locked",
            "-q",
            "--manifest-path",
            manifest,
            "-p",
            "embedder-readme",
            "--examples",
        ],
        &envs,
    )
}

/// Where packages are verified: a target directory of their own, since cargo takes a
/// registry crate of a known version as unchanged and would link the workspace's own
/// builds of older sources.
fn package_target() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(
            || cmd::project_root().join("target"),
            std::path::PathBuf::from,
        )
        .join("package-check")
}

fn path_of(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Removes what earlier `cargo package` runs left of our crates: their packages, their
/// builds in the verification directory, and the sources cargo extracted into its
/// registry cache (all keyed by name and version only, so a package of the same version
/// would be verified against old sources).
fn forget_packages() {
    let checks = package_target();
    let _ = std::fs::remove_dir_all(checks.join("package"));
    if checks.exists() {
        let mut args = vec!["clean", "--target-dir"];
        let dir = path_of(&checks);
        args.push(&dir);
        for c in CRATES {
            args.extend(["-p", c]);
        }
        let _ = std::process::Command::new(cmd::cargo())
            .args(&args)
            .status();
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
    let Some(home) = home else { return };
    for kind in ["src", "cache"] {
        let Ok(registries) = std::fs::read_dir(home.join("registry").join(kind)) else {
            continue;
        };
        for registry in registries.flatten() {
            let Ok(entries) = std::fs::read_dir(registry.path()) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if CRATES.iter().any(|c| name.starts_with(&format!("{c}-0"))) {
                    let path = entry.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
        }
    }
}

/// The library crates that other services consume one by one.
const CRATES: &[&str] = &[
    "brain-mcp-proto",
    "brain-tools-core",
    "brain-mcp-transport",
    "brain-mcp-bind",
];
