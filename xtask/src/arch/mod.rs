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
    cycles(
        &crate::project_root().join("crates/brain-mcp-bind/src"),
        &mut violations,
    )?;
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
    let mut files = Vec::new();
    collect(dir, &mut files)?;
    for path in files.iter().filter(|p| !exempt(p)) {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        for word in forbidden {
            if text.contains(word) {
                violations.push(format!("{} names {word}", path.display()));
            }
        }
    }
    Ok(())
}

/// Adds a violation for each import cycle among the top-level modules under `dir`: an
/// edge from module `a` to `b` is a `crate::b` in `a`'s code outside comments and tests.
/// Names the crate root re-exports (`crate::McpClient`) are not followed.
fn cycles(dir: &std::path::Path, violations: &mut Vec<String>) -> Result<(), String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    collect(dir, &mut files)?;
    for path in files {
        let relative = path.strip_prefix(dir).unwrap_or(&path);
        let Some(first) = relative.components().next() else {
            continue;
        };
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if matches!(module.as_str(), "lib" | "bin" | "fuzzing") || exempt(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for target in used_modules(line) {
                if target != module {
                    edges.entry(module.clone()).or_default().insert(target);
                }
            }
        }
    }
    for (from, targets) in &edges {
        for to in targets {
            if reaches(&edges, to, from, &mut BTreeSet::new()) {
                violations.push(format!(
                    "{}: module {from} imports {to}, which leads back to {from} (a cycle)",
                    dir.display()
                ));
            }
        }
    }
    Ok(())
}

/// The modules a line names as `crate::name` or inside `crate::{a, b::c}`, lower case
/// (module) names only.
fn used_modules(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').collect()
        } else {
            vec![rest]
        };
        for name in names {
            let name: String = name
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with(|c: char| c.is_ascii_lowercase()) {
                found.push(name);
            }
        }
    }
    found
}

/// Whether `to` is reachable from `from` along `edges`.
fn reaches(
    edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    from: &str,
    to: &str,
    seen: &mut std::collections::BTreeSet<String>,
) -> bool {
    if from == to {
        return true;
    }
    if !seen.insert(from.to_owned()) {
        return false;
    }
    edges
        .get(from)
        .is_some_and(|next| next.iter().any(|n| reaches(edges, n, to, seen)))
}

/// Every `.rs` file under `dir`.
fn collect(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_in_uses() {
        assert_eq!(used_modules("use crate::client::McpClient;"), ["client"]);
        assert_eq!(
            used_modules("use crate::{convert, observe::x, McpExecutor};"),
            ["convert", "observe"]
        );
        assert_eq!(
            used_modules("let a = crate::driver::safe(x); crate::text::y"),
            ["driver", "text"]
        );
    }

    #[test]
    fn a_cycle_is_found() {
        let mut edges = std::collections::BTreeMap::new();
        edges.insert("a".to_owned(), ["b".to_owned()].into());
        edges.insert("b".to_owned(), ["c".to_owned()].into());
        assert!(!reaches(&edges, "b", "a", &mut Default::default()));
        edges.insert("c".to_owned(), ["a".to_owned()].into());
        assert!(reaches(&edges, "b", "a", &mut Default::default()));
    }
}
