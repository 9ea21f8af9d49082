//! Reading a Rust file for the paths it names: the code outside test modules and comments,
//! `use` statements with their groups and renames, the names a file re-exports, and paths
//! written in the code (`crate::x::y`, `super::z`, `child::f(..)`, `alias::g(..)`).

use std::collections::BTreeMap;

/// A path a file names, and the name it is known by there when renamed (`as`).
pub(crate) type Named = (Vec<String>, Option<String>);

/// The starts of a re-export statement: a file that only hands a name on does not use it,
/// so its re-exports are followed, not counted as its own imports.
const RE_EXPORTS: [&str; 3] = ["pub use ", "pub(crate) use ", "pub(super) use "];

/// The code of a file without its inline test modules (`#[cfg(test)] mod NAME { … }`,
/// their braces matched, so code after one is still read) and without comment lines. A
/// `#[cfg(test)] mod tests;` declaration is skipped, and the code after it kept.
pub(crate) fn code_of(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = inline_test_module(rest) {
        code.push_str(&rest[..at]);
        // The module's body, its braces matched: code after it is still read.
        let open = at + rest[at..].find('{').unwrap_or(rest.len() - at);
        rest = &rest[block_end(rest, open)..];
    }
    code.push_str(rest);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the first `#[cfg(test)]` that starts a line and opens an inline module starts
/// (`mod name {`, after any further attributes and a visibility).
fn inline_test_module(code: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]") {
        let start = from + at;
        from = start + 1;
        let line_start = code[..start].rfind('\n').map_or(0, |n| n + 1);
        if !code[line_start..start].trim().is_empty() {
            continue;
        }
        let mut after = code[start + "#[cfg(test)]".len()..].trim_start();
        // Further attributes (`#[allow(..)]`) may stand between it and the module.
        while let Some(attribute) = after.strip_prefix("#[") {
            let Some(end) = attribute.find(']') else {
                break;
            };
            after = attribute[end + 1..].trim_start();
        }
        if let Some(rest) = after.strip_prefix("pub") {
            let rest = rest.trim_start();
            after = match rest.strip_prefix('(') {
                Some(scope) => scope.find(')').map_or(rest, |end| &scope[end + 1..]),
                None => rest,
            }
            .trim_start();
        }
        let inline = after.strip_prefix("mod ").is_some_and(|rest| {
            let name_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest[name_end..].trim_start().starts_with('{')
        });
        if inline {
            return Some(start);
        }
    }
    None
}

/// The index just past the block whose `{` is at `open`, braces inside string, raw string
/// and char literals and inside comments (nested block comments too) not counted; the end
/// of `code` if it never closes.
fn block_end(code: &str, open: usize) -> usize {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += code[i..].find('\n').unwrap_or(code.len() - i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = comment_end(bytes, i);
                continue;
            }
            // A raw string: `r`, `br` or `cr`, then hashes and a quote.
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#')) => {
                let prefix_start = match i.checked_sub(1).map(|p| bytes[p]) {
                    Some(b'b' | b'c') => i - 1,
                    _ => i,
                };
                let before = prefix_start.checked_sub(1).map(|p| bytes[p]);
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                if !before.is_some_and(ident) && bytes.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let body = i + 2 + hashes;
                    i = code[body..]
                        .find(&close)
                        .map_or(code.len(), |at| body + at + close.len());
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A char literal ('{', '\'', '\u{7b}', 'é'), not a lifetime ('a).
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += 3;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
            }
            b'\'' => {
                let width = code[i + 1..].chars().next().map_or(0, char::len_utf8);
                if width > 0 && bytes.get(i + 1 + width) == Some(&b'\'') {
                    i += 1 + width;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The index just past the block comment that opens at `start` (`/*`), nested ones
/// included; the end of `bytes` if it never closes.
fn comment_end(bytes: &[u8], start: usize) -> usize {
    let (mut depth, mut i) = (0usize, start);
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth = depth.saturating_sub(1);
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// `code` without its re-export statements.
pub(crate) fn without_re_exports(code: &str) -> String {
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

/// The names a module re-exports, each with the path it stands for (relative paths of
/// a child start with `self`); a glob (`pub use x::*`) is kept under `*`.
pub(crate) fn re_exports(code: &str) -> Vec<Named> {
    let mut found = Vec::new();
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
        use_paths(rest.trim(), &mut found);
    }
    found
}

/// The paths one `use` names (its text after `use `), relative ones from `self`.
fn use_paths(path: &str, found: &mut Vec<Named>) {
    let path = path.trim_start().trim_start_matches("::");
    let head = ["crate", "super", "self"]
        .into_iter()
        .find(|h| path.starts_with(&format!("{h}::")));
    match head {
        Some(head) => expand(&path[head.len() + 2..], vec![head.to_owned()], found),
        None => expand(path, vec!["self".to_owned()], found),
    }
}

/// Every path the code names (`use` statements and paths written in the code), with the
/// names its `use` statements bring in: `aliases` maps each to its path, so `driver::f`
/// after `use crate::driver;` (or `{self}`) is read as `crate::driver::f`.
pub(crate) fn paths_in(code: &str) -> Vec<Named> {
    let uses = use_statements(code);
    let mut found = Vec::new();
    for &(start, end) in &uses {
        use_paths(&code[start..end], &mut found);
    }
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, alias) in &found {
        let mut path = path.clone();
        if path.last().is_some_and(|l| l == "self") {
            path.pop();
        }
        if let Some(name) = alias.clone().or_else(|| path.last().cloned()) {
            aliases.insert(name, path);
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
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '#'))
            .map_or(0, |i| i + 1);
        let name = code[start..colons].trim_start_matches("r#");
        let before = code[..start].chars().next_back();
        if name.is_empty() || before == Some(':') {
            continue;
        }
        let prefix = match name {
            "crate" | "super" | "self" => vec![name.to_owned()],
            _ if !name.starts_with(|c: char| c.is_ascii_lowercase()) => {
                // A type's path (`Type::f`) goes where the type's `use` went.
                match aliases.get(name) {
                    Some(path) => path.clone(),
                    None => continue,
                }
            }
            _ => match aliases.get(name) {
                Some(path) => path.clone(),
                // A child module, or another crate (which resolves to the file itself).
                None => vec!["self".to_owned(), name.to_owned()],
            },
        };
        expand(&code[at..], prefix, &mut found);
    }
    found
}

/// The byte ranges of the paths of the `use` statements in `code` (after `use `, up to
/// the `;`), re-exports included.
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

/// Reads the path after `prefix` in `rest`: a chain of names (raw ones unwrapped), maybe
/// ending in a group (expanded), a glob (`*`) or a rename (`as name`).
fn expand(rest: &str, prefix: Vec<String>, found: &mut Vec<Named>) {
    let mut path = prefix;
    let mut rest = rest.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in split_group(group) {
                expand(item.trim(), path.clone(), found);
            }
            return;
        }
        if rest.starts_with('*') {
            path.push("*".to_owned());
            break;
        }
        rest = rest.strip_prefix("r#").unwrap_or(rest);
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
    let alias = rest
        .trim_start()
        .strip_prefix("as ")
        .map(|r| {
            r.trim_start()
                .trim_start_matches("r#")
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|a| !a.is_empty() && a != "_");
    found.push((path, alias));
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

/// Whether `code` names `name` as a whole word.
pub(crate) fn names_word(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        !code[..at].chars().next_back().is_some_and(ident)
            && !code[at + name.len()..].chars().next().is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_raw_strings_and_chars_do_not_end_a_test_module() {
        for inside in [
            "/* { */",
            "/* } */",
            "/* /* } */ } */",
            "const B: &[u8] = br#\"a\"{\"#;",
            "const P: &[u8] = br\"C:\\\";",
            "const C: [char; 2] = ['é', '{'];",
            "const U: char = '\\u{7b}';",
            "fn f<'a>(x: &'a str) -> &'a str { x }",
        ] {
            let text = format!(
                "fn a() {{}}\n#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod tests {{\n    {inside}\n    fn t() {{ Era::Handshake; }}\n}}\nfn after() {{ Health::new(); }}\n"
            );
            let code = code_of(&text);
            assert!(code.contains("Health::new"), "{inside}: {code}");
            assert!(!code.contains("Era::Handshake"), "{inside}: {code}");
        }
        // Only an attribute that starts a line opens a test module.
        let text = "/// `#[cfg(test)] mod x {` in a comment\nfn f() { Health::new(); }\n";
        assert!(code_of(text).contains("Health::new"));
    }

    #[test]
    fn code_after_an_inline_test_module_is_still_read() {
        let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    const S: &str = \"}\";\n    const C: char = '}';\n    const E: char = '\\'';\n    const R: &str = r#\"}\"#;\n    // }\n    fn t() { let _ = Era::Handshake; }\n}\nfn after() { Health::new(); }\n";
        let code = code_of(text);
        assert!(code.contains("fn a()"), "{code}");
        assert!(!code.contains("Era::Handshake"), "{code}");
        assert!(code.contains("Health::new"), "{code}");
    }
}
