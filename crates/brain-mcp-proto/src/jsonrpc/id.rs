//! The JSON-RPC request identifier.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A JSON-RPC request id: an integer or a string.
///
/// MCP forbids `null` ids and the specification text asks for integers, so
/// deserialisation rejects `null`, booleans, fractional numbers and integers
/// outside the `i64` range.
///
/// Ordering puts every number before every string; it exists so ids can be
/// kept in ordered maps, not because it means anything on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC ids are integers or strings
pub enum RequestId {
    /// An integer id, as most clients send.
    Number(i64),
    /// A string id (any string, including the empty string).
    String(String),
}

impl RequestId {
    /// Returns the integer value if this is a numeric id.
    pub fn as_number(&self) -> Option<i64> {
        match self {
            Self::Number(n) => Some(*n),
            Self::String(_) => None,
        }
    }

    /// Returns the string value if this is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Number(_) => None,
            Self::String(s) => Some(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

/// Formats the id as it appears in JSON: numbers bare, strings quoted and
/// escaped, so `1` and `"1"` stay distinguishable in logs.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => match serde_json::to_string(s) {
                Ok(quoted) => f.write_str(&quoted),
                Err(_) => Err(fmt::Error),
            },
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => serializer.serialize_i64(*n),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a string request id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v).map(RequestId::Number).map_err(|_| {
            E::custom(format_args!(
                "request id {v} is out of the 64-bit signed range"
            ))
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
        Ok(RequestId::String(v))
    }

    /// With serde_json's `arbitrary_precision` feature a number arrives as a one-entry
    /// map holding its exact text; only an integer written without fraction or exponent
    /// that fits in 64 signed bits is an id (the same rule as without the feature).
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RequestId, A::Error> {
        let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? else {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        };
        if key != NUMBER_TOKEN {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let text: std::borrow::Cow<'de, str> = map.next_value()?;
        if !text
            .bytes()
            .enumerate()
            .all(|(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-'))
        {
            return Err(de::Error::custom(format_args!(
                "request id {text} is not an integer"
            )));
        }
        text.parse::<i64>().map(RequestId::Number).map_err(|_| {
            de::Error::custom(format_args!(
                "request id {text} is out of the 64-bit signed range"
            ))
        })
    }
}

/// The key serde_json uses to pass a number's exact text when `arbitrary_precision` is on.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_integers_and_strings() {
        assert_eq!(
            serde_json::from_str::<RequestId>("7").unwrap(),
            RequestId::Number(7)
        );
        assert_eq!(
            serde_json::from_str::<RequestId>("-3").unwrap(),
            RequestId::Number(-3)
        );
        assert_eq!(
            serde_json::from_str::<RequestId>("\"a\\nb\"").unwrap(),
            RequestId::String("a\nb".into())
        );
        assert_eq!(
            serde_json::from_str::<RequestId>("\"\"").unwrap(),
            RequestId::String(String::new())
        );
    }

    #[test]
    fn rejects_null_bool_float_and_huge() {
        for bad in [
            "null",
            "true",
            "1.5",
            "1.0",
            "1e3",
            "18446744073709551615",
            "[]",
            "{}",
        ] {
            assert!(
                serde_json::from_str::<RequestId>(bad).is_err(),
                "{bad} must be rejected"
            );
        }
    }

    #[test]
    fn display_distinguishes_kinds() {
        assert_eq!(RequestId::Number(1).to_string(), "1");
        assert_eq!(RequestId::from("1").to_string(), "\"1\"");
        assert_eq!(RequestId::from("a\"b").to_string(), "\"a\\\"b\"");
    }

    #[test]
    fn serializes_untagged() {
        assert_eq!(serde_json::to_string(&RequestId::Number(42)).unwrap(), "42");
        assert_eq!(
            serde_json::to_string(&RequestId::from("x")).unwrap(),
            "\"x\""
        );
    }

    #[test]
    fn numbers_order_before_strings() {
        assert!(RequestId::Number(i64::MAX) < RequestId::from(""));
    }
}
