//! One walk over valid JSON text: what it meets outside its strings, and where each
//! string starts and ends. Every scan that reads JSON's structure without parsing it (how
//! many members, how deep, which keys) is this walk and a count, so none of them can skip
//! a string differently from the others.

/// What the walk meets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::exhaustive_enums)] // complete: JSON has nothing else outside strings that a scan reads
pub enum Mark {
    /// `{` or `[`; `object` tells which.
    Open {
        /// Whether it opens an object.
        object: bool,
    },
    /// `}` or `]`.
    Close,
    /// A `:` (one per object member written).
    Colon,
    /// A string, quotes included: `json[start..end]`.
    String {
        /// The index of its opening quote.
        start: usize,
        /// The index just past its closing quote (the end of the text if it never closes).
        end: usize,
    },
}

/// The marks of `json` in order. Text that is not valid JSON is walked all the same and
/// never panics; what it yields is then only as good as the text.
pub fn marks(json: &str) -> impl Iterator<Item = Mark> + '_ {
    let bytes = json.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let at = i;
            i += 1;
            match bytes[at] {
                b'{' => return Some(Mark::Open { object: true }),
                b'[' => return Some(Mark::Open { object: false }),
                b'}' | b']' => return Some(Mark::Close),
                b':' => return Some(Mark::Colon),
                b'"' => {
                    while i < bytes.len() {
                        match bytes[i] {
                            b'\\' => i += 2,
                            b'"' => {
                                i += 1;
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                    i = i.min(bytes.len());
                    return Some(Mark::String { start: at, end: i });
                }
                _ => {}
            }
        }
        None
    })
}

/// How deeply `json` nests arrays and objects.
pub fn nesting(json: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for mark in marks(json) {
        match mark {
            Mark::Open { .. } => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Mark::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// How many colons `json` has outside its strings: one per object member written.
pub fn colons(json: &str) -> usize {
    marks(json).filter(|m| *m == Mark::Colon).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_hide_what_they_hold() {
        let json = r#"{"a:{[":["x\"]}",{"b":1}],"c\\":2}"#;
        assert_eq!(colons(json), 3);
        assert_eq!(nesting(json), 3);
        let strings: Vec<&str> = marks(json)
            .filter_map(|m| match m {
                Mark::String { start, end } => Some(&json[start..end]),
                _ => None,
            })
            .collect();
        assert_eq!(strings, [r#""a:{[""#, r#""x\"]}""#, r#""b""#, r#""c\\""#]);
    }

    #[test]
    fn broken_text_never_panics() {
        for text in ["\"", "\"\\", "{\"a\\", "\"\\\"", "]]]", "{{{"] {
            let _ = marks(text).count();
            assert!(nesting(text) <= 3);
        }
    }
}
