//! JSON kept as the text it arrived in, so numbers travel digit for digit without any
//! process-wide serde_json feature: a 30-digit integer from the model reaches the server
//! as written, and a server's `1e400` reaches the host as written.
//!
//! Judging a value (schema validation) needs a parsed [`Value`], whose numbers are those
//! of the serde_json the process builds: 64-bit integers exactly, anything else as the
//! nearest `f64`, and magnitudes beyond `f64` not at all. The text is what is sent on.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// One JSON value as its exact text.
#[derive(Clone)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// `text` when it is one JSON value (surrounding whitespace is dropped).
    pub fn parse(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
        let text = if trimmed.len() == text.len() {
            text
        } else {
            trimmed.to_owned()
        };
        RawValue::from_string(text).map(Self)
    }

    /// The text of a parsed value (exact as far as the value is).
    pub fn from_value(value: &Value) -> Self {
        // A `Value` always writes as valid JSON.
        Self(RawValue::from_string(value.to_string()).unwrap_or_else(|_| null()))
    }

    /// Already checked text.
    pub fn from_raw(raw: Box<RawValue>) -> Self {
        Self(raw)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The text as serde_json's raw value, to embed it in a larger document.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// The value parsed, for judging it (see the module docs for what numbers become);
    /// fails on a number beyond `f64`'s range unless serde_json's `arbitrary_precision`
    /// is on in this build.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }

    /// The text without whitespace outside strings: two texts of one value written by
    /// the same serializer, compact or indented, compare equal this way.
    pub fn compact(&self) -> String {
        compact(self.as_str())
    }
}

/// Why JSON text could not be parsed for judging: a number past `f64`'s range is named as
/// such (the text is valid JSON; this build cannot judge it), anything else as serde_json
/// says.
pub(crate) fn unjudged(error: &serde_json::Error) -> Unjudged {
    if error.to_string().starts_with("number out of range") {
        Unjudged::PastF64
    } else {
        Unjudged::NotJson(strip_position(&error.to_string()).to_owned())
    }
}

/// Why a text cannot be judged as the value it was parsed to. `Display` follows "the
/// arguments" or "the structured result" ("holds ...", "is not ...", "write ...").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unjudged {
    /// A key written twice, or one serde_json reserves.
    #[error("{}", .0.reason())]
    Keys(crate::json_keys::KeyProblem),
    /// A number past the range of an `f64`, which this build does not check.
    #[error(
        "holds a number past the range of an f64, which this build does not check \
         (brain-tools-core's `exact-numbers` feature does)"
    )]
    PastF64,
    /// Not JSON serde_json reads (its reason, without the position).
    #[error("is not valid JSON: {0}")]
    NotJson(String),
}

fn null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

/// `text` without whitespace outside strings.
pub(crate) fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for JsonText {}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&Value> for JsonText {
    fn from(value: &Value) -> Self {
        Self::from_value(value)
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> Self {
        Self::from_value(&value)
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Reads the value's text as written; works with serde_json's own deserializers (not
/// through serde's buffering: an internally tagged enum holding one needs its own
/// `Deserialize`, as [`crate::ToolEvent`] has).
impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
    }
}

/// One JSON number as its exact text (`1`, `0.5`, `123456789012345678901234567890`,
/// `1e400`).
#[derive(Clone)]
pub struct ExactNumber(Box<RawValue>);

impl PartialEq for ExactNumber {
    /// Equal texts (`1` and `1.0` differ).
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ExactNumber {}

impl ExactNumber {
    /// `raw` when it is a number (leading or trailing whitespace is none).
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        is_number(raw.get()).then_some(Self(raw))
    }

    /// `text` when it is one JSON number.
    pub fn parse(text: &str) -> Option<Self> {
        RawValue::from_string(text.to_owned())
            .ok()
            .and_then(Self::from_raw)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The nearest `f64`: infinite past its range.
    pub fn as_f64(&self) -> f64 {
        self.as_str().parse().unwrap_or(f64::NAN)
    }
}

/// Whether `text`, valid JSON, is a number: the only values that start with a digit or `-`.
fn is_number(text: &str) -> bool {
    text.bytes()
        .next()
        .is_some_and(|b| b == b'-' || b.is_ascii_digit())
}

impl From<u64> for ExactNumber {
    fn from(n: u64) -> Self {
        Self(RawValue::from_string(n.to_string()).unwrap_or_else(|_| null()))
    }
}

impl From<i64> for ExactNumber {
    fn from(n: i64) -> Self {
        Self(RawValue::from_string(n.to_string()).unwrap_or_else(|_| null()))
    }
}

impl TryFrom<f64> for ExactNumber {
    type Error = NotFinite;

    /// The shortest text that reads back as `n`; JSON has no infinities or NaN.
    fn try_from(n: f64) -> Result<Self, NotFinite> {
        let number = serde_json::Number::from_f64(n).ok_or(NotFinite)?;
        Self::parse(&number.to_string()).ok_or(NotFinite)
    }
}

impl TryFrom<&serde_json::Number> for ExactNumber {
    type Error = NotFinite;

    /// The number's text as serde_json writes it.
    fn try_from(n: &serde_json::Number) -> Result<Self, NotFinite> {
        Self::parse(&n.to_string()).ok_or(NotFinite)
    }
}

/// An `f64` that is infinite or NaN, which no JSON number writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("JSON numbers are finite")]
#[non_exhaustive]
pub struct NotFinite;

impl fmt::Debug for ExactNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ExactNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ExactNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Reads a number's text as written (with serde_json's own deserializers, as
/// [`JsonText`]); anything else is refused.
impl<'de> Deserialize<'de> for ExactNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Self::from_raw(raw).ok_or_else(|| de::Error::custom("expected a JSON number"))
    }
}

/// serde_json appends " at line L column C"; the message already says where.
pub(crate) fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |cut| &message[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_text_and_other_values_are_no_number() {
        for text in [
            "0",
            "-0",
            "1.5",
            "123456789012345678901234567890",
            "1e400",
            "-2E-7",
        ] {
            let n: ExactNumber = serde_json::from_str(text).unwrap();
            assert_eq!(n.as_str(), text);
            assert_eq!(serde_json::to_string(&n).unwrap(), text);
        }
        for text in ["\"1\"", "null", "[1]", "01", "1.", ".5", "1e", "+1", "-"] {
            assert!(ExactNumber::parse(text).is_none(), "{text}");
        }
        assert!(ExactNumber::try_from(f64::INFINITY).is_err());
        assert_eq!(ExactNumber::try_from(0.5).unwrap().as_str(), "0.5");
        assert_eq!(ExactNumber::parse("1e400").unwrap().as_f64(), f64::INFINITY);
    }

    #[test]
    fn text_stays_as_written_and_compacts_outside_strings() {
        let text = JsonText::parse(" {\"a\" : [1e400, \"x y\\\" z\"]}\n").unwrap();
        assert_eq!(text.as_str(), "{\"a\" : [1e400, \"x y\\\" z\"]}");
        assert_eq!(text.compact(), "{\"a\":[1e400,\"x y\\\" z\"]}");
        assert_eq!(serde_json::to_string(&text).unwrap(), text.as_str());
        assert!(JsonText::parse("{").is_err());
        assert!(JsonText::parse("1 2").is_err());
    }
}
