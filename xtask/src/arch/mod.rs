//! The architecture check: dependency rules between layers, read from `cargo tree`;
//! source rules for the client core; no import cycle of three or more files in any crate
//! and none between bind's top-level modules, re-exports followed; no MCP method spelled
//! outside the core.
//!
//! The protocol model (with the client core) and the policy layer must stay free of IO
//! crates, so that any executor or runtime can use them and their tests need no network;
//! the core must not reach for the clock, the network, files or threads through std
//! either; the transport must not know the policy or binding layers above it.

use crate::cmd;

mod graph;
mod parse;

use graph::{Graph, collect, exempt};

/// Crates that must not appear in a package's normal (non-dev) dependency graph.
const RULES: &[(&str, &[&str])] = &[
    (
        "brain-mcp-proto",
        &["tokio", "hyper", "hyper-util", "http", "rustls", "mio"],
    ),
    // The policy layer uses the protocol crate for its URL type (`EndpointUrl`) and its
    // walk over JSON text (`text::marks`) only;
    // proto is IO-free, so the policy layer stays free of HTTP and IO crates.
    (
        "brain-tools-core",
        &[
            "hyper",
            "hyper-util",
            "http",
            "rustls",
            "brain-mcp-transport",
        ],
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
/// Test sources (`tests.rs`, `tests/`) are exempt, since they build the core's inputs by
/// hand; nothing else is (the fuzzing entry points ask the core like any driver).
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
    // A server's health is its `ServerState`'s, kept in `servers.rs`: bind keeps none
    // of its own.
    ("crates/brain-mcp-bind/src", &["Health::"]),
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

/// Where each crate's sources are: no crate may hold an import cycle of three or more
/// files.
const CRATE_SOURCES: &[&str] = &[
    "crates/brain-mcp-proto/src",
    "crates/brain-tools-core/src",
    "crates/brain-mcp-transport/src",
    "crates/brain-mcp-bind/src",
    "xtask/src",
    "bench/src",
    "tests/src",
    "tests/conformance/runner/src",
];

/// Source trees that must not spell an MCP method as a string: they take the name from
/// the core (`brain_mcp_proto::mcp::methods`), or better, the core's messages.
const NO_METHOD_LITERALS: &[&str] = &[
    "crates/brain-mcp-bind/src",
    "crates/brain-mcp-transport/src",
];

/// The file that names every MCP method, one `pub const NAME: &str = "method";` each.
const METHODS: &str = "crates/brain-mcp-proto/src/mcp/methods.rs";

/// Checks every rule and reports all violations at once.
pub(crate) fn run() -> Result<(), String> {
    let cargo = cmd::cargo();
    let root = cmd::project_root();
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
    let methods = method_names(&root.join(METHODS))?;
    let quoted: Vec<String> = methods.iter().map(|m| format!("\"{m}\"")).collect();
    // Every word each tree must not name, so each tree is read once.
    let mut words: Vec<(&str, Vec<&str>)> = Vec::new();
    let rules = SOURCE_RULES
        .iter()
        .map(|(dir, forbidden)| (*dir, forbidden.to_vec()));
    let literals = NO_METHOD_LITERALS
        .iter()
        .map(|dir| (*dir, quoted.iter().map(String::as_str).collect()));
    for (dir, forbidden) in rules.chain(literals) {
        match words.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, all)) => all.extend(forbidden),
            None => words.push((dir, forbidden)),
        }
    }
    for (dir, forbidden) in &words {
        scan(&root.join(dir), forbidden, &mut violations)?;
    }
    for dir in CRATE_SOURCES {
        let graph = Graph::read(&root.join(dir))?;
        for circle in graph.circles() {
            violations.push(format!(
                "{dir}: {} files import each other in a loop: {}",
                circle.len(),
                graph.arrows(&circle).join(", ")
            ));
        }
        if dir.ends_with("brain-mcp-bind/src") {
            for (from, to) in graph.module_loops() {
                violations.push(format!(
                    "{dir}: module {from} imports {to}, which leads back to {from} (a cycle)"
                ));
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

/// Adds a violation for each `.rs` file under `dir` that names one of `forbidden` in its
/// code (tests and comment lines left out).
fn scan(
    dir: &std::path::Path,
    forbidden: &[&str],
    violations: &mut Vec<String>,
) -> Result<(), String> {
    let mut files = Vec::new();
    collect(dir, &mut files)?;
    for path in files
        .iter()
        .filter(|p| !exempt(p.strip_prefix(dir).unwrap_or(p)))
    {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let code = parse::code_of(&text);
        for word in forbidden {
            if names(&code, word) {
                violations.push(format!("{} names {word}", path.display()));
            }
        }
    }
    Ok(())
}

/// Whether `code` names `word` as a whole path: `Era::` in `Era::Handshake`, not in
/// `NoEra::Status` (a name that only ends the same way).
fn names(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word)
        .any(|(at, _)| !word.starts_with(ident) || !code[..at].ends_with(ident))
}

/// The method names `file` defines (`pub const NAME: &str = "method";`).
fn method_names(file: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let names: Vec<String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("pub const ") && l.contains(": &str = \""))
        .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
        .collect();
    if names.is_empty() {
        return Err(format!("{} names no method", file.display()));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_spelled_in_code_is_found_and_one_in_a_comment_or_test_is_not() {
        let dir = std::env::temp_dir().join(format!("arch-literals-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tests")).expect("mkdir");
        let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).expect("write");
        write("ok.rs", "// sends \"tools/call\"\nfn f() {}\n");
        write("tests/t.rs", "const M: &str = \"tools/call\";\n");
        write(
            "inline.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests { const M: &str = \"tools/call\"; }\n",
        );
        let mut violations = Vec::new();
        scan(&dir, &["\"tools/call\""], &mut violations).expect("scans");
        assert!(violations.is_empty(), "{violations:?}");
        write("bad.rs", "fn step() -> &'static str { \"tools/call\" }\n");
        scan(&dir, &["\"tools/call\""], &mut violations).expect("scans");
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert!(violations[0].contains("bad.rs"), "{violations:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_counts_only_whole() {
        assert!(names("match e { Era::Handshake => 1 }", "Era::"));
        assert!(names("(Era::Handshake)", "Era::"));
        assert!(!names("NoEra::Status(503)", "Era::"));
        assert!(names("x = \"tools/call\"", "\"tools/call\""));
    }

    #[test]
    fn the_method_names_are_read_from_the_core() {
        let names = method_names(&cmd::project_root().join(METHODS)).expect("reads");
        assert!(names.iter().any(|n| n == "tools/call"), "{names:?}");
        assert!(names.iter().any(|n| n == "tasks/get"), "{names:?}");
    }
}
