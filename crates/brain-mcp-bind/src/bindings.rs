//! Naming the bindings of a server's tools, for discovery (`mcp-tools`) and the host alike:
//! a remote name becomes a valid binding name distinct from the others, and a name the
//! listing does not offer is reported with the reason it was hidden or the names close to
//! it.

use std::time::Instant;

use brain_mcp_proto::text::{FRAGMENT_LIMIT, cut};

use crate::text;

/// The longest binding name the host config accepts.
const MAX_BINDING_NAME: usize = 64;

/// A binding name the host config accepts for a remote tool name: characters outside
/// `A-Za-z0-9_-` become `_`, and the result is cut to 64 characters. (Remote names are
/// free-form in practice; binding names are what the model sees.)
pub(crate) fn model_name(remote: &str) -> String {
    let mut name: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_BINDING_NAME)
        .collect();
    if name.is_empty() {
        name.push('_');
    }
    name
}

/// The binding names of `wanted` (each tool's remote name, and the name asked for, if
/// any), in order, with a note for each tool bound under a name of our making. A name
/// asked for is kept as given (the loader judges it); every other is the remote name
/// made valid, with a numeric suffix when another tool's name became the same. The same
/// remote tool wanted twice without a name gets the same name twice, which the loader
/// refuses: two bindings of one tool need names of their own.
pub(crate) fn names(wanted: &[(&str, Option<&str>)]) -> (Vec<String>, Vec<String>) {
    let mut taken: Vec<String> = wanted
        .iter()
        .filter_map(|(_, asked)| asked.map(str::to_owned))
        .collect();
    let mut made: Vec<(&str, String)> = Vec::new();
    let mut notes = Vec::new();
    let names = wanted
        .iter()
        .map(|(remote, asked)| {
            if let Some(asked) = asked {
                return (*asked).to_owned();
            }
            if let Some((_, name)) = made.iter().find(|(r, _)| r == remote) {
                return name.clone();
            }
            let valid = model_name(remote);
            let name = unique(&valid, &taken);
            let shown = cut(remote, FRAGMENT_LIMIT);
            if name != valid {
                notes.push(format!(
                    "tool {shown:?} is bound as {name:?}: another tool's binding is {valid:?}"
                ));
            } else if name != *remote {
                notes.push(format!(
                    "tool {shown:?} is bound as {name:?}: binding names are 1 to 64 of A-Z a-z 0-9 _ -"
                ));
            }
            taken.push(name.clone());
            made.push((remote, name.clone()));
            name
        })
        .collect();
    (names, notes)
}

/// `name`, or `name` with a numeric suffix when `taken` has it.
fn unique(name: &str, taken: &[String]) -> String {
    let free = |candidate: &str| taken.iter().all(|t| t != candidate);
    if free(name) {
        return name.to_owned();
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = MAX_BINDING_NAME - suffix.len();
            format!("{}{suffix}", &name[..name.len().min(keep)])
        })
        .find(|candidate| free(candidate))
        .unwrap_or_else(|| name.to_owned())
}

/// Each name of `missing` quoted, with why it is missing: hidden by the listing (`hidden`:
/// name and reason), or the `offered` names close to it (the search stops at `until`).
pub(crate) fn missing<'a>(
    missing: &[&str],
    offered: impl Iterator<Item = &'a str> + Clone,
    hidden: &[(String, String)],
    until: Option<Instant>,
) -> String {
    missing
        .iter()
        .map(|m| {
            let quoted = format!("{:?}", cut(m, FRAGMENT_LIMIT));
            if let Some((_, why)) = hidden.iter().find(|(n, _)| n == m) {
                let why = cut(why, FRAGMENT_LIMIT);
                return format!("{quoted} (not offered: invalid x-mcp-header annotation: {why})");
            }
            let close = text::close_matches(m, offered.clone(), until);
            if close.is_empty() {
                quoted
            } else {
                let close: Vec<String> = close
                    .iter()
                    .map(|c| format!("{:?}", cut(c, FRAGMENT_LIMIT)))
                    .collect();
                format!("{quoted} (did you mean {}?)", close.join(" or "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_asked_for_are_kept_and_the_rest_made_valid_and_distinct() {
        let (names, notes) = names(&[
            ("a.b", None),
            ("a_b", None),
            ("say", Some("a_b_2")),
            ("x", Some("chosen")),
            ("a b", None),
        ]);
        // `a_b_2` is asked for, so the third tool made `a_b` is `a_b_3`.
        assert_eq!(names, ["a_b", "a_b_3", "a_b_2", "chosen", "a_b_4"]);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("\"a.b\" is bound as \"a_b\": binding names"),
            "{notes:?}"
        );
        assert!(
            notes[1].contains("another tool's binding is \"a_b\""),
            "{notes:?}"
        );
        // One remote tool twice without names: the same name, for the loader to refuse.
        let (names, _) = super::names(&[("echo", None), ("echo", None)]);
        assert_eq!(names, ["echo", "echo"]);
    }

    #[test]
    fn a_missing_name_says_why_it_is_hidden_or_what_is_close() {
        let offered = ["echo", "add"];
        let hidden = [("bad".to_owned(), "not a string".to_owned())];
        let text = missing(&["ecko", "bad", "zzz"], offered.into_iter(), &hidden, None);
        assert_eq!(
            text,
            "\"ecko\" (did you mean \"echo\"?), \"bad\" (not offered: invalid x-mcp-header \
             annotation: not a string), \"zzz\""
        );
    }

    #[test]
    fn model_names_are_valid_and_cut() {
        assert_eq!(model_name("get weather"), "get_weather");
        assert_eq!(model_name(""), "_");
        assert_eq!(model_name(&"x".repeat(100)).len(), 64);
    }
}
