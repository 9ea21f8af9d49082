//! The import graph of one crate's sources, file by file: an edge from file `a` to file `b`
//! is a path in `a`'s code (`crate::`, `super::`, `self::`, a child's or an imported
//! name's, alone or in a `use` group) that names `b`'s module or an item `b` defines. A
//! name a module re-exports (`pub use`, the crate root's included, renamed or by glob) is
//! followed to the file that defines it, so an import through `crate::Name` is an edge
//! to where `Name` lives; a module that re-exports a name and uses it too imports it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::parse;

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
    /// The graph of the `.rs` files under `src` (other binaries and test files left out;
    /// `main.rs` is a binary crate's root).
    pub(crate) fn read(src: &Path) -> Result<Self, String> {
        let mut paths = Vec::new();
        collect(src, &mut paths)?;
        let mut sources = Vec::new();
        for path in paths {
            let relative = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
            if exempt(&relative) || relative.starts_with("bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            sources.push((
                relative.clone(),
                Source {
                    module: module_of(&relative),
                    code: parse::code_of(&text),
                },
            ));
        }
        sources.sort_by(|a, b| a.0.cmp(&b.0));
        let by_module: BTreeMap<ModPath, usize> = sources
            .iter()
            .enumerate()
            .map(|(i, (_, s))| (s.module.clone(), i))
            .collect();
        let exports: Vec<Exports> = sources
            .iter()
            .map(|(_, s)| Exports::of(&s.code, &s.module))
            .collect();
        let resolver = Resolver {
            by_module: &by_module,
            exports: &exports,
        };
        let edges = sources
            .iter()
            .enumerate()
            .map(|(i, (_, s))| {
                let own = parse::without_re_exports(&s.code);
                let mut targets: Vec<ModPath> = parse::paths_in(&own)
                    .into_iter()
                    .filter_map(|(p, _)| absolute(&s.module, &p))
                    .collect();
                // A name this module hands on and also uses.
                targets.extend(
                    exports[i]
                        .names
                        .iter()
                        .filter(|(name, _)| parse::names_word(&own, name))
                        .map(|(_, path)| path.clone()),
                );
                targets
                    .iter()
                    .filter_map(|p| resolver.file(p, 0))
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
            if circle.len() >= 3 && !self.pairs_only(&circle) {
                circles.push(circle.iter().map(|&j| self.files[j].clone()).collect());
            }
        }
        circles
    }

    /// Whether a set of files that reach each other is only pairs that use each other
    /// around no loop (a module and helpers that each import it back): every import
    /// inside it answered by one back, and the pairs a tree. No three of them then import
    /// each other in a loop.
    fn pairs_only(&self, circle: &[usize]) -> bool {
        let inside = |a: usize| self.edges[a].iter().filter(|b| circle.contains(b));
        let mut pairs = 0;
        for &a in circle {
            for &b in inside(a) {
                if !self.edges[b].contains(&a) {
                    return false;
                }
                pairs += 1;
            }
        }
        pairs / 2 == circle.len() - 1
    }

    /// Each pair of top-level modules (`client`, `driver`, …; the crate root left out)
    /// where the first imports the second and the second leads back: any loop between
    /// top-level modules, of two files or more.
    pub(crate) fn module_loops(&self) -> Vec<(String, String)> {
        let top = |file: &str| -> Option<String> {
            let first = file.split('/').next()?.trim_end_matches(".rs");
            (first != "lib" && first != "main").then(|| first.to_owned())
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

/// The names one module re-exports: each with the path it stands for, and the modules
/// it re-exports everything of (`pub use x::*`).
struct Exports {
    names: BTreeMap<String, ModPath>,
    globs: Vec<ModPath>,
}

impl Exports {
    fn of(code: &str, module: &[String]) -> Self {
        let mut exports = Self {
            names: BTreeMap::new(),
            globs: Vec::new(),
        };
        for (path, alias) in parse::re_exports(code) {
            let Some(mut full) = absolute(module, &path) else {
                continue;
            };
            if full.last().is_some_and(|l| l == "*") {
                full.pop();
                exports.globs.push(full);
            } else if let Some(name) = alias.or_else(|| path.last().cloned()) {
                exports.names.insert(name, full);
            }
        }
        exports
    }
}

/// Follows module paths to the files that define them.
struct Resolver<'a> {
    by_module: &'a BTreeMap<ModPath, usize>,
    exports: &'a [Exports],
}

impl Resolver<'_> {
    /// The file an absolute path names: the deepest module it reaches, or, when the next
    /// name is one that module re-exports (by name or by glob), the file the re-export
    /// leads to.
    fn file(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 8 {
            return None;
        }
        let deepest = (0..=path.len())
            .rev()
            .find(|&n| self.by_module.contains_key(&path[..n]))?;
        let file = self.by_module[&path[..deepest]];
        let Some(name) = path.get(deepest) else {
            return Some(file);
        };
        let exports = &self.exports[file];
        let through = match exports.names.get(name) {
            Some(target) => self.file(target, depth + 1),
            None => exports.globs.first().and_then(|glob| {
                let mut next = glob.clone();
                next.extend(path[deepest..].iter().cloned());
                self.file(&next, depth + 1)
            }),
        };
        Some(through.unwrap_or(file))
    }
}

/// The module path of the file at `relative` (from `src`): `lib.rs`, `main.rs` and a
/// directory's `mod.rs` stand for the module that holds them.
fn module_of(relative: &Path) -> ModPath {
    let mut parts: ModPath = relative
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    let root = parts.len() == 1 && parts[0] == "main";
    if root || matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
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

/// Files the rules skip: tests (`path` is taken from a crate's `src`, or is a scanned
/// tree's file: a folder named `tests` above the tree does not count).
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
        let found = parse::paths_in(
            "use super::{a::{B, c::D as E}, e};\nuse crate::d::{self};\nlet x = crate::f::g(1); \
             my_crate::h; d::probe(); E::new(); crate::r#type::T;",
        );
        let found: Vec<String> = found.iter().map(|(p, _)| p.join("::")).collect();
        assert_eq!(
            found,
            [
                "super::a::B",
                "super::a::c::D",
                "super::e",
                "crate::d::self",
                "crate::f::g",
                "self::my_crate::h",
                "crate::d::probe",
                "super::a::c::D::new",
                "crate::type::T",
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

    #[test]
    fn binaries_globs_renames_and_a_module_using_what_it_hands_on_are_seen() {
        // Under a folder named `tests`: still read (only a crate's own test files are not).
        let dir = tree(
            "bin/tests/src",
            &[
                ("main.rs", "mod a;\nmod m;\nfn main() { a::run(); }\n"),
                ("a.rs", "pub fn run() { crate::m::Gamma::new(); }\n"),
                (
                    "m/mod.rs",
                    "mod b;\nmod c;\npub use c::*;\npub use b::Beta as B;\nfn f() -> B { todo!() }\n",
                ),
                ("m/b.rs", "pub struct Beta;\n"),
                (
                    "m/c.rs",
                    "pub struct Gamma;\npub fn root() { crate::helper(); }\n",
                ),
            ],
        );
        // main.rs is the root: c -> main (helper), main -> a, a -> c through the glob.
        std::fs::write(
            dir.join("main.rs"),
            "mod a;\nmod m;\nfn main() { a::run(); }\npub fn helper() {}\n",
        )
        .expect("write");
        let graph = Graph::read(&dir).expect("reads");
        let index = |f: &str| graph.files.iter().position(|g| g == f).expect(f);
        assert!(
            graph.edges[index("a.rs")].contains(&index("m/c.rs")),
            "a glob is followed"
        );
        assert!(
            graph.edges[index("m/mod.rs")].contains(&index("m/b.rs")),
            "a module that uses what it hands on imports it"
        );
        assert_eq!(
            graph.circles(),
            [["a.rs", "m/c.rs", "main.rs"]],
            "{:?}",
            graph.edges
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_module_and_helpers_that_each_use_it_back_are_pairs_not_a_circle() {
        let dir = tree(
            "pairs",
            &[
                ("lib.rs", "mod m;\n"),
                (
                    "m/mod.rs",
                    "mod a;\nmod b;\npub struct S;\nfn f() { a::x(); b::y(); }\n",
                ),
                ("m/a.rs", "use super::S;\npub fn x() {}\n"),
                ("m/b.rs", "use super::S;\npub fn y() {}\n"),
            ],
        );
        let graph = Graph::read(&dir).expect("reads");
        assert!(graph.circles().is_empty(), "{:?}", graph.edges);
        // b using a closes a loop of three: m -> b -> a -> m.
        std::fs::write(
            dir.join("m/b.rs"),
            "use super::{S, a};\npub fn y() { a::x(); }\n",
        )
        .expect("write");
        let graph = Graph::read(&dir).expect("reads");
        assert_eq!(graph.circles().len(), 1, "{:?}", graph.edges);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
