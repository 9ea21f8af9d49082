//! `cargo xtask tidy`: house rules no compiler checks.
//!
//! - No Rust file over [`MAX_LINES`] lines: a file holds one piece, small enough to read.
//! - No `#[allow(...)]` without a reason: a `//` comment on its line, or the line above.
//! - No dependency a package does not use: each one declared in a member's manifest is
//!   named somewhere in that member's Rust files.

use std::path::{Path, PathBuf};

/// The most lines of one Rust file.
const MAX_LINES: usize = 600;

/// The directories holding the workspace's Rust code.
const CODE_DIRS: &[&str] = &["crates", "tests", "xtask", "fuzz/fuzz_targets"];

/// Runs every rule and reports every breach at once.
pub(crate) fn run() -> Result<(), String> {
    let root = crate::cmd::project_root();
    let mut files = Vec::new();
    for dir in CODE_DIRS {
        collect(&root.join(dir), &mut files);
    }
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let lines = text.lines().count();
        if lines > MAX_LINES {
            problems.push(format!(
                "{shown}: {lines} lines (at most {MAX_LINES}); split it"
            ));
        }
        for at in allows_without_reason(&text) {
            problems.push(format!("{shown}:{at}: an allow without a reason comment"));
        }
    }
    let mut declared = Vec::new();
    for manifest in manifests(&root)? {
        declared.extend(unused_dependencies(&manifest, &mut problems)?);
    }
    let root_manifest =
        std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    for name in table_names(&root_manifest, &["[workspace.dependencies]"]) {
        if !declared.contains(&name) {
            problems.push(format!(
                "Cargo.toml: workspace dependency {name} is used by no member"
            ));
        }
    }
    if problems.is_empty() {
        eprintln!("==> tidy: ok ({} Rust files)", files.len());
        Ok(())
    } else {
        Err(format!("tidy failed:\n  {}", problems.join("\n  ")))
    }
}

/// Every `.rs` file under `dir`, skipping build output and installed packages.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "node_modules" {
                collect(&path, files);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The 1-based line numbers of `#[allow(` / `#![allow(` attributes with no `//` comment
/// on any of their lines or on the line just above.
fn allows_without_reason(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if line.starts_with("#[allow(") || line.starts_with("#![allow(") {
            let start = i;
            while i < lines.len() && !lines[i].contains(")]") {
                i += 1;
            }
            let end = i.min(lines.len() - 1);
            let commented = lines[start..=end].iter().any(|l| l.contains("//"))
                || (start > 0 && lines[start - 1].trim_start().starts_with("//"));
            if !commented {
                found.push(start + 1);
            }
        }
        i += 1;
    }
    found
}

/// The manifests of the workspace members.
fn manifests(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = vec![
        root.join("xtask/Cargo.toml"),
        root.join("tests/Cargo.toml"),
        root.join("tests/conformance/runner/Cargo.toml"),
    ];
    let crates = std::fs::read_dir(root.join("crates")).map_err(|e| e.to_string())?;
    for entry in crates.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        if manifest.exists() {
            found.push(manifest);
        }
    }
    Ok(found)
}

/// Adds a problem for each dependency of `manifest` its package's Rust files never name;
/// returns the names it declares.
fn unused_dependencies(manifest: &Path, problems: &mut Vec<String>) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(manifest).map_err(|e| e.to_string())?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let mut files = Vec::new();
    collect(dir, &mut files);
    let mut sources = String::new();
    for file in files {
        sources.push_str(&std::fs::read_to_string(&file).unwrap_or_default());
    }
    let names = dependency_names(&text);
    for name in &names {
        let ident = name.replace('-', "_");
        let used = [
            format!("{ident}::"),
            format!("use {ident}"),
            format!("{ident}!"),
        ]
        .iter()
        .any(|form| sources.contains(form.as_str()));
        if !used {
            problems.push(format!(
                "{}: dependency {name} is never used",
                manifest.display()
            ));
        }
    }
    Ok(names)
}

/// The names in the `[dependencies]`, `[dev-dependencies]` and `[build-dependencies]`
/// tables of a manifest.
fn dependency_names(manifest: &str) -> Vec<String> {
    table_names(
        manifest,
        &[
            "[dependencies]",
            "[dev-dependencies]",
            "[build-dependencies]",
        ],
    )
}

/// The keys of `tables` in a manifest.
fn table_names(manifest: &str, tables: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            // `[target.'cfg(unix)'.dependencies]` is a `[dependencies]` table too.
            let table = match line.strip_prefix("[target.") {
                Some(rest) => rest
                    .rsplit_once("'.")
                    .or_else(|| rest.rsplit_once("\"."))
                    .map_or(line.to_owned(), |(_, kind)| format!("[{kind}")),
                None => line.to_owned(),
            };
            in_deps = tables.contains(&table.as_str());
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once(['=', '.']) {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                names.push(name.to_owned());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_tables_count_as_dependencies() {
        let manifest = "[dependencies]\na = 1\n[target.'cfg(unix)'.dependencies]\nnix.workspace = true\n\
                        [target.\"cfg(windows)\".dev-dependencies]\nw = 1\n[features]\nx = []\n";
        assert_eq!(dependency_names(manifest), ["a", "nix", "w"]);
    }

    #[test]
    fn allows_need_a_reason() {
        let text = "#[allow(dead_code)]\nfn a() {}\n// why\n#[allow(x)]\n#![allow(y)] // why\n#![allow(\n  z,\n)]\n";
        assert_eq!(allows_without_reason(text), vec![1, 6]);
    }

    #[test]
    fn dependency_tables_are_read() {
        let manifest = "[package]\nname = \"x\"\n[dependencies]\nserde.workspace = true\ntokio = { workspace = true }\n[dev-dependencies]\nproptest = \"1\"\n[lints]\nworkspace = true\n";
        assert_eq!(dependency_names(manifest), ["serde", "tokio", "proptest"]);
    }
}
