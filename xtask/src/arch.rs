//! The architecture check: dependency rules between layers, read from `cargo tree`, and
//! source rules for the client core.
//!
//! The protocol model (with the client core) and the policy layer must stay free of IO
//! crates, so that any executor or runtime can use them and their tests need no network;
//! the core must not reach for the clock, the network, files or threads through std
//! either; the transport must not know the policy or binding layers above it.

use crate::cmd;

/// Crates that must not appear in a package's normal (non-dev) dependency graph.
const RULES: &[(&str, &[&str])] = &[
    (
        "brain-mcp-proto",
        &["tokio", "hyper", "hyper-util", "http", "rustls", "mio"],
    ),
    (
        "brain-tools-core",
        &["hyper", "hyper-util", "http", "rustls", "brain-mcp-proto"],
    ),
    (
        "brain-mcp-transport",
        &["brain-tools-core", "brain-mcp-bind"],
    ),
];

/// Source trees that must not name these items. The client core takes time as an
/// argument and does no IO of its own. The transport and the drivers decide nothing
/// about eras or methods: they never pick an era or a framing by its variant, nor name a
/// method; they ask the core (`Framing::for_era`, `opens_session`, the core's messages).
/// Test sources (`tests.rs`, `tests/`) and the fuzzing entry points are exempt, since
/// they build the core's inputs by hand.
const SOURCE_RULES: &[(&str, &[&str])] = &[
    (
        "crates/brain-mcp-proto/src",
        &[
            "Instant::now",
            "SystemTime",
            "std::net",
            "std::fs",
            "std::thread",
            "std::process",
            "std::io::stdin",
            "thread::sleep",
        ],
    ),
    ("crates/brain-mcp-bind/src", PROTOCOL_DECISIONS),
    ("crates/brain-mcp-transport/src", PROTOCOL_DECISIONS),
];

/// What only the client core may name: the eras and framings by variant, and methods.
const PROTOCOL_DECISIONS: &[&str] = &[
    "Era::",
    "Framing::Handshake",
    "Framing::Stateless",
    "methods::",
    "ProtocolVersion::",
];

/// Files under a scanned tree that the source rules skip: tests and fuzzing glue.
fn exempt(path: &std::path::Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "tests.rs" || n == "fuzzing.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// Checks every rule and reports all violations at once.
pub(crate) fn run() -> Result<(), String> {
    let cargo = crate::ci::cargo();
    let mut violations = Vec::new();
    for (package, forbidden) in RULES {
        let tree = cmd::output(
            &cargo,
            &[
                "tree", "--locked", "-p", package, "-e", "normal", "--prefix", "none", "--format",
                "{p}",
            ],
        )?;
        for line in tree.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            if forbidden.contains(&name) {
                violations.push(format!("{package} depends on {name}"));
            }
        }
    }
    for (dir, forbidden) in SOURCE_RULES {
        scan(&crate::project_root().join(dir), forbidden, &mut violations)?;
    }
    violations.sort();
    violations.dedup();
    if violations.is_empty() {
        eprintln!("==> architecture check: ok");
        Ok(())
    } else {
        Err(format!(
            "architecture check failed:\n  {}",
            violations.join("\n  ")
        ))
    }
}

/// Adds a violation for each `.rs` file under `dir` that names one of `forbidden`.
fn scan(
    dir: &std::path::Path,
    forbidden: &[&str],
    violations: &mut Vec<String>,
) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, forbidden, violations)?;
        } else if path.extension().is_some_and(|e| e == "rs") && !exempt(&path) {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            for word in forbidden {
                if text.contains(word) {
                    violations.push(format!("{} names {word}", path.display()));
                }
            }
        }
    }
    Ok(())
}
