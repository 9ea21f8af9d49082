//! Errors of the JSON-RPC layer.

use std::fmt;

use serde_json::value::RawValue;

/// Why bytes could not be decoded as JSON-RPC, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeError {
    /// Position of the offending message inside a batch; `None` for a single message.
    pub batch_index: Option<usize>,
    /// What was wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind) -> Self {
        Self {
            batch_index: None,
            kind,
        }
    }

    pub(crate) fn at(mut self, index: usize) -> Self {
        self.batch_index = Some(index);
        self
    }

    pub(crate) fn json(e: &serde_json::Error) -> Self {
        Self::new(DecodeErrorKind::Json {
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })
    }

    pub(crate) fn field(field: &'static str, expected: &'static str, found: &RawValue) -> Self {
        Self::new(DecodeErrorKind::InvalidField {
            field,
            expected,
            found: describe(found),
        })
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.batch_index {
            write!(f, "batch element {i}: ")?;
        }
        fmt::Display::fmt(&self.kind, f)
    }
}

impl std::error::Error for DecodeError {}

/// The specific problem behind a [`DecodeError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Not well-formed JSON, or a member appeared twice.
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The parser's description.
        message: String,
    },
    /// Valid JSON, but neither an object nor an array.
    #[error("expected a JSON-RPC object or a batch array, found {found}")]
    NotAnObject {
        /// What was found instead.
        found: String,
    },
    /// An array with no elements.
    #[error("a batch must not be empty")]
    EmptyBatch,
    /// The `jsonrpc` member is absent.
    #[error("missing member \"jsonrpc\" (must be \"2.0\")")]
    MissingVersion,
    /// The `jsonrpc` member is not the string `"2.0"`.
    #[error("member \"jsonrpc\" must be \"2.0\", found {found}")]
    WrongVersion {
        /// What was found instead.
        found: String,
    },
    /// A member had the wrong type or value.
    #[error("member \"{field}\": expected {expected}, found {found}")]
    InvalidField {
        /// The member's name, e.g. `id` or `error.code`.
        field: &'static str,
        /// What a valid value looks like.
        expected: &'static str,
        /// What was found instead.
        found: String,
    },
    /// A request or response with `"id": null`.
    #[error("a {kind} must not have a null id")]
    NullId {
        /// `request` or `response`.
        kind: &'static str,
    },
    /// A response (with `result`) that has no `id` member.
    #[error("a response must have an id")]
    MissingId,
    /// Both `result` and `error` present.
    #[error("message has both \"result\" and \"error\"")]
    ResultAndError,
    /// Neither `result` nor `error` (nor `method`) present.
    #[error("message has neither \"result\" nor \"error\" (and no \"method\")")]
    NeitherResultNorError,
    /// A `method` together with `result` or `error`.
    #[error("message has \"method\" together with \"result\" or \"error\"")]
    MethodWithResult,
}

/// serde_json appends " at line L column C"; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// A short description of a raw JSON value for error messages; never the
/// whole value, so errors stay small and carry no bulk payload.
pub(crate) fn describe(raw: &RawValue) -> String {
    const MAX: usize = 32;
    let text = raw.get();
    let kind = match text.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => return "an object".to_owned(),
        Some(b'[') => return "an array".to_owned(),
        Some(b't' | b'f') => "the boolean",
        Some(b'n') => return "null".to_owned(),
        _ => "the number",
    };
    if text.len() <= MAX {
        format!("{kind} {text}")
    } else {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{kind} {}...", &text[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn describes_values_briefly() {
        assert_eq!(describe(&raw("1.5")), "the number 1.5");
        assert_eq!(describe(&raw("null")), "null");
        assert_eq!(describe(&raw("{\"a\":1}")), "an object");
        let long = format!("\"{}\"", "é".repeat(40));
        let d = describe(&raw(&long));
        assert!(d.ends_with("..."), "{d}");
        assert!(d.len() < 50, "{d}");
    }

    #[test]
    fn display_names_batch_position() {
        let e = DecodeError::new(DecodeErrorKind::MissingVersion).at(3);
        assert_eq!(
            e.to_string(),
            "batch element 3: missing member \"jsonrpc\" (must be \"2.0\")"
        );
    }
}
