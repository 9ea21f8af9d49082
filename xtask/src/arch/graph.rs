//! The import graph of one crate's sources, file by file: an edge from file `a` to file `b`
//! is a path in `a`'s code (`crate::`, `super::`, `self::`, alone or in a `use` group)
//! that names `b`'s module or an item `b` defines. A name a module re-exports (`pub use`,
//! the crate root's included) is followed to the file that defines it, so an import
//! through `crate::Name` is an edge to where `Name` lives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`[]` is the root, `["client", "call"]`).
type ModPath = Vec<String>;

/// One crate's files and the edges between them.
pub(crate) struct Graph {
    /// Each file, by its path relative to the crate's `src`.
    pub(crate) files: Vec<String>,
    /// The files each file imports (indices into `files`).
    pub(crate) edges: Vec<BTreeSet<usize>>,
}

/// A file's module path and its code outside tests and comments.
struct Source {
    module: ModPath,
    code: String,
}

impl Graph {
    /// The graph of the `.rs` files under `src` (binaries and test files left out).
    pub(crate) fn read(src: &Path) -> Result<Self, String> {
        let mut paths = Vec::new();
        collect(src, &mut paths)?;
        let mut sources = Vec::new();
        for path in paths {
            let relative = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
            if exempt(&path) || relative.starts_with("bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            sources.push((
                relative,
                Source {
                    module: module_of(&path, src),
                    code: code_of(&text),
                },
            ));
        }
        sources.sort_by(|a, b| a.0.cmp(&b.0));
        let by_module: BTreeMap<ModPath, usize> = sources
            .iter()
            .enumerate()
            .map(|(i, (_, s))| (s.module.clone(), i))
            .collect();
        let exports: Vec<BTreeMap<String, ModPath>> = sources
            .iter()
            .map(|(_, s)| re_exports(&s.code, &s.module))
            .collect();
        let resolver = Resolver {
            by_module: &by_module,
            exports: &exports,
        };
        let edges = sources
            .iter()
            .enumerate()
            .map(|(i, (_, s))| {
                paths_in(&without_re_exports(&s.code))
                    .into_iter()
                    .filter_map(|p| absolute(&s.module, &p))
                    .filter_map(|p| resolver.file(&p, 0))
                    .filter(|&target| target != i)
                    .collect()
            })
            .collect();
        Ok(Self {
            files: sources
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect(),
            edges,
        })
    }

    /// The imports among `files` (one circle), as `a.rs -> b.rs`.
    pub(crate) fn arrows(&self, circle: &[String]) -> Vec<String> {
        let index = |f: &String| self.files.iter().position(|g| g == f);
        let members: Vec<usize> = circle.iter().filter_map(index).collect();
        let mut arrows = Vec::new();
        for &a in &members {
            for &b in self.edges[a].iter().filter(|b| members.contains(b)) {
                arrows.push(format!("{} -> {}", self.files[a], self.files[b]));
            }
        }
        arrows
    }

    /// Every set of three or more files that import each other in a loop.
    pub(crate) fn circles(&self) -> Vec<Vec<String>> {
        let reach: Vec<BTreeSet<usize>> =
            (0..self.files.len()).map(|i| self.reachable(i)).collect();
        let mut placed = BTreeSet::new();
        let mut circles = Vec::new();
        for i in 0..self.files.len() {
            if placed.contains(&i) {
                continue;
            }
            let circle: Vec<usize> = (0..self.files.len())
                .filter(|&j| reach[i].contains(&j) && reach[j].contains(&i))
                .collect();
            placed.extend(circle.iter().copied());
            if circle.len() >= 3 {
                circles.push(circle.iter().map(|&j| self.files[j].clone()).collect());
            }
        }
        circles
    }

    /// Each pair of top-level modules (`client`, `driver`, …; the crate root left out)
    /// where the first imports the second and the second leads back: any loop between
    /// top-level modules, of two files or more.
    pub(crate) fn module_loops(&self) -> Vec<(String, String)> {
        let top = |file: &str| -> Option<String> {
            let first = file.split('/').next()?.trim_end_matches(".rs");
            (first != "lib").then(|| first.to_owned())
        };
        let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (i, targets) in self.edges.iter().enumerate() {
            let Some(from) = top(&self.files[i]) else {
                continue;
            };
            for &t in targets {
                if let Some(to) = top(&self.files[t]).filter(|to| *to != from) {
                    modules.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        let leads = |from: &str, to: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.to_owned()];
            while let Some(at) = stack.pop() {
                if at == to {
                    return true;
                }
                if seen.insert(at.clone()) {
                    stack.extend(modules.get(&at).into_iter().flatten().cloned());
                }
            }
            false
        };
        let mut loops = Vec::new();
        for (from, targets) in &modules {
            for to in targets {
                if leads(to, from) {
                    loops.push((from.clone(), to.clone()));
                }
            }
        }
        loops
    }

    /// The files reachable from `from` (itself included).
    fn reachable(&self, from: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            for &next in &self.edges[at] {
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        seen
    }
}

/// Follows module paths to the files that define them.
struct Resolver<'a> {
    by_module: &'a BTreeMap<ModPath, usize>,
    exports: &'a [BTreeMap<String, ModPath>],
}

impl Resolver<'_> {
    /// The file an absolute path names: the deepest module it reaches, or, when the next
    /// name is one that module re-exports, the file the re-export leads to.
    fn file(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 8 {
            return None;
        }
        let deepest = (0..=path.len())
            .rev()
            .find(|&n| self.by_module.contains_key(&path[..n]))?;
        let file = self.by_module[&path[..deepest]];
        match path.get(deepest) {
            Some(name) => match self.exports[file].get(name) {
                Some(target) => self.file(target, depth + 1).or(Some(file)),
                None => Some(file),
            },
            None => Some(file),
        }
    }
}

/// The module path of the file at `path` under `src`.
fn module_of(path: &Path, src: &Path) -> ModPath {
    let relative = path.strip_prefix(src).unwrap_or(path);
    let mut parts: ModPath = relative
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The code of a file without its test module (`#[cfg(test)] mod NAME { … }`, which
/// stands last) and without comment lines. A `#[cfg(test)] mod tests;` declaration is
/// skipped, and the code after it kept.
pub(crate) fn code_of(text: &str) -> String {
    let mut code = text;
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]") {
        let start = from + at;
        let after = code[start + "#[cfg(test)]".len()..].trim_start();
        let after = after.strip_prefix("pub ").unwrap_or(after);
        let inline = after.strip_prefix("mod ").is_some_and(|rest| {
            let name_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest[name_end..].trim_start().starts_with('{')
        });
        if inline {
            code = &code[..start];
            break;
        }
        from = start + 1;
    }
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path the code names from `crate`, `super` or `self`, with `use` groups expanded
/// (`super::{a, b::{c, d}}` is `super::a`, `super::b::c`, `super::b::d`).
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let begin = from + at;
            from = begin + start.len();
            // A whole word only: `my_crate::` or `xsuper::` is not ours.
            let before = begin
                .checked_sub(1)
                .map(|b| bytes[b] as char)
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':');
            if before.is_some() {
                continue;
            }
            let head = start.trim_end_matches("::").to_owned();
            expand(&code[begin + start.len()..], vec![head], &mut found);
        }
    }
    // A path from a child module (`use parse::x;`, `error::field(..)`) is relative to the
    // file's own module; one from another crate resolves to the file itself and is no edge.
    let uses = use_statements(code);
    for &(start, end) in &uses {
        let path = code[start..end].trim_start();
        if !["crate::", "super::", "self::", "::"]
            .iter()
            .any(|p| path.starts_with(p))
        {
            expand(path, vec!["self".to_owned()], &mut found);
        }
    }
    let mut at = 0;
    while let Some(rel) = code[at..].find("::") {
        let colons = at + rel;
        at = colons + 2;
        if uses.iter().any(|&(s, e)| (s..e).contains(&colons)) {
            continue;
        }
        let start = code[..colons]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = &code[start..colons];
        let before = code[..start].chars().next_back();
        if name.is_empty()
            || !name.starts_with(|c: char| c.is_ascii_lowercase())
            || matches!(name, "crate" | "super" | "self")
            || before == Some(':')
        {
            continue;
        }
        expand(
            &code[at..],
            vec!["self".to_owned(), name.to_owned()],
            &mut found,
        );
    }
    found
}

/// The byte ranges of the paths of the `use` statements in `code` (after `use `, up to
/// the `;`).
fn use_statements(code: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(rel) = code[from..].find("use ") {
        let at = from + rel;
        from = at + 4;
        let word_start = code[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || c == ')');
        if !word_start {
            continue;
        }
        let end = code[from..].find(';').map_or(code.len(), |e| from + e);
        ranges.push((from, end));
        from = end;
    }
    ranges
}

/// Reads the path after `prefix` in `rest` (a name chain, maybe ending in a group).
fn expand(rest: &str, prefix: Vec<String>, found: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    let mut rest = rest;
    loop {
        // `super::super::x` keeps its `super`s as names; they are resolved later.
        if let Some(group) = rest.strip_prefix('{') {
            for item in split_group(group) {
                expand(item.trim(), path.clone(), found);
            }
            return;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        path.push(name);
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    found.push(path);
}

/// The items of a `use` group up to its closing brace, nested groups kept whole.
fn split_group(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// `path` (starting with `crate`, `super` or `self`) made absolute from module
/// `module` (a directory's module and a file's alike: `self` is the module, `super` the
/// one above); `None` when it climbs above the root.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = module.to_vec();
    let mut names = path.iter().peekable();
    match names.next().map(String::as_str) {
        Some("crate") => base.clear(),
        Some("self") => {}
        Some("super") => {
            base.pop()?;
        }
        _ => return None,
    }
    while names.peek().is_some_and(|n| *n == "super") {
        names.next();
        base.pop()?;
    }
    base.extend(names.cloned());
    Some(base)
}

/// The starts of a re-export statement: a file that only hands a name on does not use it,
/// so its re-exports are followed, not counted as its own imports.
const RE_EXPORTS: [&str; 3] = ["pub use ", "pub(crate) use ", "pub(super) use "];

/// `code` without its re-export statements.
fn without_re_exports(code: &str) -> String {
    let mut kept = String::with_capacity(code.len());
    let mut rest = code;
    loop {
        let next = RE_EXPORTS
            .iter()
            .filter_map(|p| rest.find(p))
            .filter(|&at| at == 0 || rest[..at].ends_with(char::is_whitespace))
            .min();
        let Some(at) = next else {
            kept.push_str(rest);
            return kept;
        };
        kept.push_str(&rest[..at]);
        rest = rest[at..].find(';').map_or("", |end| &rest[at + end + 1..]);
    }
}

/// The names module `module` re-exports (`pub use` and `pub(crate) use`), each with the
/// absolute path it stands for.
fn re_exports(code: &str, module: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        // Attributes and doc lines may stand before the `use` on lines of their own.
        let Some(rest) = statement.lines().find_map(|line| {
            RE_EXPORTS
                .iter()
                .find_map(|p| line.trim_start().strip_prefix(p))
                .map(|first| {
                    let at = statement.find(first).unwrap_or(0);
                    &statement[at..]
                })
        }) else {
            continue;
        };
        let mut paths = Vec::new();
        // A re-export of a child (`pub use call::Call`) is relative to this module.
        let rest = rest.trim();
        let starts_here = !["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        if starts_here {
            expand(rest, vec!["self".to_owned()], &mut paths);
        } else {
            paths.extend(paths_in(rest));
        }
        for path in paths {
            // A directory's module and a file's module have the same `self`.
            if let (Some(last), Some(full)) = (path.last().cloned(), absolute(module, &path)) {
                names.insert(last, full);
            }
        }
    }
    names
}

/// Files under a scanned tree that the source rules skip: tests.
pub(crate) fn exempt(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// Every `.rs` file under `dir`.
pub(crate) fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
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

    /// A crate's `src` made of `files` (path, text) in a fresh directory.
    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("arch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        dir
    }

    #[test]
    fn a_loop_through_a_crate_root_re_export_and_groups_is_found() {
        let dir = tree(
            "loop",
            &[
                (
                    "lib.rs",
                    "mod a;\nmod m;\n#[doc(hidden)]\npub use a::Alpha;\n",
                ),
                (
                    "a.rs",
                    "use crate::m::{b::{Beta}, other};\npub struct Alpha;\n",
                ),
                ("m/mod.rs", "mod b;\nmod c;\npub fn other() {}\n"),
                ("m/b.rs", "use super::c::Gamma;\npub struct Beta;\n"),
                (
                    "m/c.rs",
                    "// use crate::nothing;\nuse crate::Alpha;\npub struct Gamma;\n",
                ),
            ],
        );
        let graph = Graph::read(&dir).expect("reads");
        let circles = graph.circles();
        assert_eq!(circles, [["a.rs", "m/b.rs", "m/c.rs"]], "{:?}", graph.edges);
        assert_eq!(
            graph.module_loops(),
            [
                ("a".to_owned(), "m".to_owned()),
                ("m".to_owned(), "a".to_owned())
            ]
        );
        // The loop broken: c no longer takes Alpha.
        std::fs::write(dir.join("m/c.rs"), "pub struct Gamma;\n").expect("write");
        let graph = Graph::read(&dir).expect("reads");
        assert!(graph.circles().is_empty());
        assert!(graph.module_loops().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_files_importing_each_other_are_no_circle_and_tests_are_left_out() {
        let dir = tree(
            "pair",
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                (
                    "a.rs",
                    "#[cfg(test)]\nmod tests;\nuse crate::b::B;\npub struct A;\n",
                ),
                (
                    "b.rs",
                    "use crate::a::A;\npub struct B;\n#[cfg(test)]\nmod tests { use crate::c::C; }\n",
                ),
                ("c.rs", "use crate::a::A;\npub struct C;\n"),
            ],
        );
        let graph = Graph::read(&dir).expect("reads");
        assert!(graph.circles().is_empty());
        assert_eq!(
            graph.module_loops().len(),
            2,
            "a and b still loop as modules"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_are_read_from_groups_and_chains() {
        let found = paths_in("use super::{a::{B, c::D}, e};\nlet x = crate::f::g(1); my_crate::h;");
        let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
        assert_eq!(
            found,
            [
                "crate::f::g",
                "super::a::B",
                "super::a::c::D",
                "super::e",
                "self::my_crate::h"
            ]
        );
        assert_eq!(
            absolute(
                &["x".into(), "y".into()],
                &["super".into(), "super".into(), "z".into()]
            ),
            Some(vec!["z".to_owned()])
        );
        assert_eq!(absolute(&[], &["super".into(), "z".into()]), None);
    }
}
