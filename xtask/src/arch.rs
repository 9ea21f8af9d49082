//! The architecture check: dependency rules between layers, read from `cargo tree`.
//!
//! The protocol model and the policy layer must stay free of IO crates, so that any
//! executor or runtime can use them and their tests need no network.

use crate::cmd;

/// Crates that must not appear in a package's normal (non-dev) dependency graph.
const RULES: &[(&str, &[&str])] = &[
    (
        "brain-mcp-proto",
        &["tokio", "hyper", "hyper-util", "http", "rustls", "mio"],
    ),
    (
        "brain-tools-core",
        &["hyper", "hyper-util", "http", "rustls"],
    ),
];

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
