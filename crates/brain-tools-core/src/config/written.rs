//! One binding as written: its members, with keys and strings borrowed from the document
//! wherever they hold no escape and, in a streamed load, its schemas kept as their text.
//!
//! Reading each binding of a 10,000-binding config into a `serde_json::Value` (a map of
//! owned keys and strings, dropped right after the check) cost about a third of the load;
//! read this way, a binding allocates its list of members, escaped strings and the values
//! that are neither strings nor schemas.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::Step;
use super::json::{NUMBER_TOKEN, Node, number_after_token, refuse_reserved};
use super::repeats::Duplicates;

/// Members up to which a binding is searched in order; past it, through an index. A
/// binding has a dozen fields, but a document may give one a million keys.
const SEARCHED_IN_ORDER: usize = 16;

/// The value of one member of a binding.
#[derive(Debug)]
pub(crate) enum Member<'a> {
    /// A JSON string.
    Str(Cow<'a, str>),
    /// `input_schema` or `output_schema` of a streamed binding, as its JSON text.
    Schema(&'a str),
    /// Any other value.
    Value(Cow<'a, Value>),
}

impl Member<'_> {
    /// The string, if the member is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(text) => Some(text),
            Self::Value(value) => value.as_str(),
            Self::Schema(_) => None,
        }
    }

    /// The value, unless the member is a string or a schema's text.
    pub(crate) fn value(&self) -> Option<&Value> {
        match self {
            Self::Value(value) => Some(value),
            Self::Str(_) | Self::Schema(_) => None,
        }
    }
}

/// The members of one binding object; a key written twice holds its last value, as a
/// JSON value would.
#[derive(Debug, Default)]
pub(crate) struct Written<'a> {
    members: Vec<(Cow<'a, str>, Member<'a>)>,
    /// Where each key is in `members`, once there are more than [`SEARCHED_IN_ORDER`].
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

impl<'a> Written<'a> {
    /// The members of a binding already parsed as a JSON object.
    pub(crate) fn of_map(map: &'a Map<String, Value>) -> Self {
        let mut written = Self::default();
        for (key, value) in map {
            let member = match value {
                Value::String(text) => Member::Str(Cow::Borrowed(text)),
                other => Member::Value(Cow::Borrowed(other)),
            };
            written.set(Cow::Borrowed(key), member);
        }
        written
    }

    /// Where `key` is in `members`.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.members.iter().position(|(name, _)| name == key),
        }
    }

    /// The member named `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Member<'a>> {
        self.position(key).map(|at| &self.members[at].1)
    }

    /// Whether the binding has a member named `key`.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The member names, each once, in the order first written (a parsed map's own order
    /// for [`Self::of_map`]).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(key, _)| key.as_ref())
    }

    /// Sets `key` to `member`, replacing the value it had.
    fn set(&mut self, key: Cow<'a, str>, member: Member<'a>) {
        if let Some(at) = self.position(&key) {
            self.members[at].1 = member;
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.members.len());
        }
        self.members.push((key, member));
        if self.index.is_none() && self.members.len() > SEARCHED_IN_ORDER {
            let index = self.members.iter().enumerate();
            self.index = Some(index.map(|(at, (key, _))| (key.clone(), at)).collect());
        }
    }

    /// The binding as a JSON value (schema texts parsed).
    #[cfg(test)]
    pub(crate) fn to_value(&self) -> Value {
        let members = self.members.iter().map(|(key, member)| {
            let value = match member {
                Member::Str(text) => Value::String(text.to_string()),
                Member::Schema(text) => serde_json::from_str(text).expect("schema text"),
                Member::Value(value) => value.clone().into_owned(),
            };
            (key.to_string(), value)
        });
        Value::Object(members.collect())
    }
}

/// One element of the root's `tools` array: its members if it is an object, `None` if it
/// is anything else (read through all the same, to find the keys repeated inside it).
pub(crate) struct BindingSeed<'p, 'd> {
    pub(crate) at: Step<'p>,
    pub(crate) duplicates: &'d Duplicates,
}

impl<'de> DeserializeSeed<'de> for BindingSeed<'_, '_> {
    type Value = Option<Written<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BindingSeed<'_, '_> {
    type Value = Option<Written<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Node::new(self.at, self.duplicates).visit_seq(seq)?;
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut written = Written::default();
        while let Some(key) = map.next_key_seed(Text)? {
            // With serde_json's `arbitrary_precision`, a number arrives as a one-entry map
            // under this reserved key: no object.
            if written.members.is_empty() && key == NUMBER_TOKEN {
                number_after_token(&mut map)?;
                return Ok(None);
            }
            refuse_reserved(&key)?;
            let repeated = written.contains(&key);
            let member = if key == "input_schema" || key == "output_schema" {
                // Kept as text: most schemas repeat across bindings, and the loader finds a
                // repeat by its text without building it again. Its nesting is checked by
                // the loader, once per distinct text.
                let raw: &'de RawValue = map.next_value()?;
                Member::Schema(raw.get())
            } else {
                map.next_value_seed(MemberSeed {
                    at: Step::Key(&self.at, &key),
                    duplicates: self.duplicates,
                })?
            };
            if repeated {
                self.duplicates.note(Step::Key(&self.at, &key));
            }
            written.set(key, member);
        }
        Ok(Some(written))
    }
}

/// A string, borrowed from the document when it holds no escape.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// The value of a binding's member other than a schema.
struct MemberSeed<'p, 'd> {
    at: Step<'p>,
    duplicates: &'d Duplicates,
}

impl<'de> DeserializeSeed<'de> for MemberSeed<'_, '_> {
    type Value = Member<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MemberSeed<'_, '_> {
    type Value = Member<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Member::Value(Cow::Owned(Value::Bool(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Member::Value(Cow::Owned(Value::from(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Member::Value(Cow::Owned(Value::from(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Member::Value(Cow::Owned(Value::from(v))))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Member::Str(Cow::Owned(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Member::Value(Cow::Owned(Value::Null)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let value = Node::new(self.at, self.duplicates).visit_seq(seq)?;
        Ok(Member::Value(Cow::Owned(value)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        // A number under `arbitrary_precision` comes here too; the node reads it as one.
        let value = Node::new(self.at, self.duplicates).visit_map(map)?;
        Ok(Member::Value(Cow::Owned(value)))
    }
}
