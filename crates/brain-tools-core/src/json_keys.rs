//! The keys of JSON text that is checked as a parsed value but delivered as text (a
//! call's arguments, a structured result): the two must mean the same thing, so a key
//! written twice in one object (the value checked holds only the last; a reader of the
//! text may take the first) and a key serde_json reserves for itself (which it reads as
//! something other than an object) are refused.

use std::collections::HashSet;

use brain_mcp_proto::text::marks::{Mark, marks};

/// The prefix of the keys serde_json reserves (`…::Number`, `…::RawValue`).
const RESERVED_PREFIX: &str = "$serde_json::private::";

/// Why a text's keys cannot be checked as its parsed value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyProblem {
    /// One object writes this key twice.
    Repeated(String),
    /// A key serde_json reserves.
    Reserved,
}

impl KeyProblem {
    /// The reason, after "the arguments" or "the structured result".
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Repeated(key) => format!(
                "write the key {:?} twice in one object: only one value of a key can be checked",
                crate::text::cut(key.clone(), 64)
            ),
            Self::Reserved => {
                format!("use a key starting with \"{RESERVED_PREFIX}\", which serde_json reserves")
            }
        }
    }
}

/// Checks every key of `text` (valid JSON) in one pass: a string followed by a colon is a
/// key of the innermost open object.
pub(crate) fn check_keys(text: &str) -> Result<(), KeyProblem> {
    // One entry per open bracket: the keys seen so far for an object, `None` for an array.
    let mut open: Vec<Option<HashSet<String>>> = Vec::new();
    let mut walk = marks(text).peekable();
    while let Some(mark) = walk.next() {
        match mark {
            Mark::Open { object } => open.push(object.then(HashSet::new)),
            Mark::Close => {
                open.pop();
            }
            Mark::String { start, end } if walk.peek() == Some(&Mark::Colon) => {
                let Some(Some(keys)) = open.last_mut() else {
                    continue;
                };
                let raw = &text[start..end];
                let key = if raw.contains('\\') {
                    serde_json::from_str::<String>(raw).unwrap_or_default()
                } else {
                    raw.get(1..raw.len().saturating_sub(1))
                        .unwrap_or_default()
                        .to_owned()
                };
                if key.starts_with(RESERVED_PREFIX) {
                    return Err(KeyProblem::Reserved);
                }
                if keys.contains(&key) {
                    return Err(KeyProblem::Repeated(key));
                }
                keys.insert(key);
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_and_reserved_keys_are_found_in_any_spelling() {
        assert_eq!(
            check_keys(r#"{"a":{"b":1,"c":[{"b":2}]},"b":{"b":3}}"#),
            Ok(())
        );
        assert_eq!(
            check_keys(r#"{"a": {"p": "/etc", "p" : "/ok"}}"#),
            Err(KeyProblem::Repeated("p".into()))
        );
        // Escaped, the same key.
        assert_eq!(
            check_keys(r#"{"p": 1, "\u0070": 2}"#),
            Err(KeyProblem::Repeated("p".into()))
        );
        for reserved in [
            r#"{"n": {"$serde_json::private::Number": "5"}}"#,
            r#"[{"$serde_json::private::RawValue": "{}"}]"#,
            r#"{"$serde_json::private::\u004eumber": "5"}"#,
        ] {
            assert_eq!(
                check_keys(reserved),
                Err(KeyProblem::Reserved),
                "{reserved}"
            );
        }
        // The same text as a value, a string with a colon, brackets in strings.
        assert_eq!(
            check_keys(r#"{"a": "$serde_json::private::Number", "b": "x\": {", "c": ["a", "a"]}"#),
            Ok(())
        );
    }
}
