//! Parses the config text, also noting keys that appear twice in one object
//! ([`Duplicates`]).
//!
//! [`parse_at`] builds a value (a schema's text, in the loader). [`stream`] hands each
//! element of the root's `tools` array to a callback as soon as it is read, as its members
//! borrowed from the text ([`Written`]), and keeps nothing of it, so a large config never
//! exists twice in memory (as text and as one big tree of values). Paths are only written
//! out for a duplicate key, never for every value.

use std::collections::HashSet;
use std::fmt;

use brain_mcp_proto::text::marks::nesting;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::error::Step;
use super::repeats::Duplicates;
use super::written::{BindingSeed, Written};

/// The parsed document and its duplicated keys, in document order.
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Result<(Value, Duplicates), serde_json::Error> {
    parse_at(text, "")
}

/// Parses `text`, a value found at `path` of the document (`""`: the document itself):
/// the value and its duplicated keys, with paths from the document's root.
pub(crate) fn parse_at(text: &str, path: &str) -> Result<(Value, Duplicates), serde_json::Error> {
    let duplicates = Duplicates::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let at = if path.is_empty() {
        Step::Root
    } else {
        Step::Prefix(path)
    };
    let value = Node {
        at,
        duplicates: &duplicates,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, duplicates))
}

/// The deepest nesting of arrays and objects serde_json reads into a value, counted from
/// the document's root.
const MAX_NESTING: usize = 127;

/// Levels around a binding's schema: the root object, the `tools` array, the binding.
const ABOVE_SCHEMA: usize = 3;

/// Whether a binding's schema written as `text` nests deeper than serde_json would read
/// it inside the document. serde_json skips a raw value without its nesting limit, so the
/// loader asks this of each schema text it has not seen before (the same text nests the
/// same): scanning every binding's schema cost 16% of a 10k-binding load.
pub(crate) fn schema_too_deep(text: &str) -> bool {
    ABOVE_SCHEMA + nesting(text) > MAX_NESTING
}

/// The root keys whose values [`Root::others`] keeps.
pub(crate) const ROOT_SETTINGS: &[&str] = &["allow_private_auth_destinations", "token_store"];

/// What the root of a streamed document held besides the tools.
#[derive(Debug, Default)]
pub(crate) struct Root {
    /// Whether the root is a JSON object.
    pub(crate) is_object: bool,
    /// The root's keys, in document order, each once.
    pub(crate) keys: Vec<String>,
    /// Whether `tools` was there and held something other than an array.
    pub(crate) tools_not_array: bool,
    /// The values of the root's settings besides `tools` (the first of each; a repeat is
    /// an error): only those of [`ROOT_SETTINGS`], so an unknown field's value is not kept.
    pub(crate) others: Vec<(String, Value)>,
}

/// What [`stream`] calls with each element of the root's `tools` array: its index, its
/// members (`None` when it is not an object) and the duplicated keys found inside it.
pub(crate) type OnTool<'de> = dyn FnMut(usize, Option<Written<'de>>, Vec<String>) + 'de;

/// Parses `text`, calling `tool` for each element of the root's `tools` array as soon as
/// it is read. Returns the root's shape and the duplicated keys not handed to `tool`.
pub(crate) fn stream<'de>(
    text: &'de str,
    tool: &mut OnTool<'de>,
) -> Result<(Root, Duplicates), serde_json::Error> {
    let duplicates = Duplicates::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let root = RootSeed {
        duplicates: &duplicates,
        tool,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((root, duplicates))
}

/// The key serde_json uses to hand a number's exact text to a visitor when its
/// `arbitrary_precision` feature is on (the `exact-numbers` feature turns it on).
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The value after [`NUMBER_TOKEN`] as the first key of a map: a number's exact text,
/// refused as serde_json refuses it when it is none (an object written with that key).
pub(crate) fn number_after_token<'de, A: MapAccess<'de>>(
    map: &mut A,
) -> Result<serde_json::Number, A::Error> {
    let text: String = map.next_value()?;
    text.parse().map_err(de::Error::custom)
}

/// The key under which serde_json's own parser (with its `raw_value` feature, which the
/// workspace turns on) reads a string as JSON text. A document using it would mean one
/// thing to this loader and another to a caller that parsed it with serde_json first, so
/// it is refused.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Refuses a key serde_json reserves for itself.
pub(crate) fn refuse_reserved<E: de::Error>(key: &str) -> Result<(), E> {
    if key == RAW_VALUE_TOKEN {
        return Err(E::custom(format!(
            "the key \"{RAW_VALUE_TOKEN}\" is reserved"
        )));
    }
    Ok(())
}

/// One value being read, and where it sits.
pub(crate) struct Node<'p, 'd> {
    at: Step<'p>,
    duplicates: &'d Duplicates,
}

impl<'p, 'd> Node<'p, 'd> {
    /// The value at `at`, noting its repeated keys in `duplicates`.
    pub(crate) fn new(at: Step<'p>, duplicates: &'d Duplicates) -> Self {
        Self { at, duplicates }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let child = Node {
                at: Step::Index(&self.at, items.len()),
                duplicates: self.duplicates,
            };
            match seq.next_element_seed(child)? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        let mut first = true;
        while let Some(key) = map.next_key::<String>()? {
            // With serde_json's `arbitrary_precision`, a number arrives as a one-entry map
            // under this reserved key, holding the number's exact text.
            if first && key == NUMBER_TOKEN {
                return number_after_token(&mut map).map(Value::Number);
            }
            refuse_reserved(&key)?;
            first = false;
            let child = Node {
                at: Step::Key(&self.at, &key),
                duplicates: self.duplicates,
            };
            let value = map.next_value_seed(child)?;
            if object.contains_key(&key) {
                self.duplicates.note(Step::Key(&self.at, &key));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// The document root, read key by key.
struct RootSeed<'d, 't, 'de> {
    duplicates: &'d Duplicates,
    tool: &'t mut OnTool<'de>,
}

impl<'de> DeserializeSeed<'de> for RootSeed<'_, '_, 'de> {
    type Value = Root;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Root, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RootSeed<'_, '_, 'de> {
    type Value = Root;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Root, E> {
        Ok(Root::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Root, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Root::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Root, A::Error> {
        let mut root = Root {
            is_object: true,
            ..Root::default()
        };
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.is_empty() && key == NUMBER_TOKEN {
                number_after_token(&mut map)?;
                return Ok(Root::default());
            }
            refuse_reserved(&key)?;
            let repeated = !seen.insert(key.clone());
            if repeated {
                self.duplicates.note(Step::Key(&Step::Root, &key));
            }
            if key == "tools" {
                let tools = ToolsSeed {
                    duplicates: self.duplicates,
                    tool: &mut *self.tool,
                };
                root.tools_not_array |= !map.next_value_seed(tools)?;
            } else {
                let child = Node {
                    at: Step::Key(&Step::Root, &key),
                    duplicates: self.duplicates,
                };
                let value = map.next_value_seed(child)?;
                if !repeated && ROOT_SETTINGS.contains(&key.as_str()) {
                    root.others.push((key.clone(), value));
                }
            }
            if !repeated {
                root.keys.push(key);
            }
        }
        Ok(root)
    }
}

/// The root's `tools` value: each element goes to the callback. `true` for an array.
struct ToolsSeed<'d, 't, 'de> {
    duplicates: &'d Duplicates,
    tool: &'t mut OnTool<'de>,
}

impl<'de> DeserializeSeed<'de> for ToolsSeed<'_, '_, 'de> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ToolsSeed<'_, '_, 'de> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        // An object (or a number, under `arbitrary_precision`): read as any other value.
        let tools = Step::Key(&Step::Root, "tools");
        Node::new(tools, self.duplicates).visit_map(map)?;
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let tools = Step::Key(&Step::Root, "tools");
        let mut index = 0;
        loop {
            let mark = self.duplicates.mark();
            let child = BindingSeed {
                at: Step::Index(&tools, index),
                duplicates: self.duplicates,
            };
            let Some(binding) = seq.next_element_seed(child)? else {
                return Ok(true);
            };
            (self.tool)(index, binding, self.duplicates.since(mark));
            index += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#;
        let (value, duplicates) = parse(text).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
        assert!(duplicates.is_empty());
    }

    #[test]
    #[cfg(feature = "exact-numbers")]
    fn numbers_keep_their_exact_text() {
        let text = r#"{"big": 123456789012345678901234567890, "dec": 0.1000000000000000055511151231257827, "e": 1e400}"#;
        let (value, _) = parse(text).unwrap();
        assert_eq!(
            value.to_string(),
            // Digits are kept; only the exponent is written in one form.
            r#"{"big":123456789012345678901234567890,"dec":0.1000000000000000055511151231257827,"e":1e+400}"#
        );
    }

    #[test]
    fn finds_duplicate_keys_with_their_paths() {
        let text = r#"{"tools": [{"name": "a", "x": {"k": 1, "k": 2}, "name": "b"}], "tools": []}"#;
        let (value, duplicates) = parse(text).unwrap();
        assert_eq!(value, json!({"tools": []}));
        assert_eq!(
            duplicates.into_parts(),
            (
                vec![
                    "tools[0].x.k".into(),
                    "tools[0].name".into(),
                    "tools".into()
                ],
                0
            )
        );
    }

    #[test]
    fn rejects_trailing_garbage_and_deep_nesting() {
        assert!(parse("{} x").is_err());
        assert!(parse(&"[".repeat(10_000)).is_err());
        let mut ignore = |_: usize, _: Option<Written<'_>>, _: Vec<String>| {};
        assert!(stream("{} x", &mut ignore).is_err());
        assert!(stream(&format!("{{\"tools\": {}", "[".repeat(10_000)), &mut ignore).is_err());
    }

    #[test]
    fn streams_each_tool_with_its_duplicates() {
        let text =
            r#"{"x": {"k": 1, "k": 2}, "tools": [{"a": 1}, {"b": {"c": 1, "c": 2}}], "tools": 5}"#;
        let mut seen = Vec::new();
        let mut note = |i, v: Option<Written<'_>>, d| seen.push((i, v.map(|v| v.to_value()), d));
        let (root, duplicates) = stream(text, &mut note).unwrap();
        assert_eq!(
            seen,
            [
                (0, Some(json!({"a": 1})), vec![]),
                (
                    1,
                    Some(json!({"b": {"c": 2}})),
                    vec!["tools[1].b.c".to_owned()]
                ),
            ]
        );
        assert_eq!(
            duplicates.into_parts(),
            (vec!["x.k".into(), "tools".into()], 0)
        );
        assert!(root.is_object && root.tools_not_array);
        assert_eq!(root.keys, ["x", "tools"]);
    }

    #[test]
    fn a_number_where_an_object_or_the_tools_belong_is_no_object() {
        let mut ignore = |_: usize, _: Option<Written<'_>>, _: Vec<String>| {};
        let (root, _) = stream("12345678901234567890123", &mut ignore).unwrap();
        assert!(!root.is_object && root.keys.is_empty());
        let (root, _) = stream(r#"{"tools": 1.5}"#, &mut ignore).unwrap();
        assert!(root.tools_not_array);
        let mut seen = Vec::new();
        let mut note = |_, v: Option<Written<'_>>, _| seen.push(v.map(|v| v.to_value()));
        stream(
            r#"{"tools": [{"n": 1e300}, 1e300, "s", [{"k": 1, "k": 2}]]}"#,
            &mut note,
        )
        .unwrap();
        assert_eq!(seen[0].as_ref().unwrap().to_string(), r#"{"n":1e+300}"#);
        assert_eq!(seen[1..], [None, None, None]);
    }

    #[test]
    fn nesting_counts_brackets_outside_strings_only() {
        assert_eq!(nesting("1"), 0);
        assert_eq!(nesting("{}"), 1);
        assert_eq!(nesting(r#"{"a":[{"b":[]}],"c":{}}"#), 4);
        assert_eq!(nesting(r#"{"a":"[[[{{{"}"#), 1);
        assert_eq!(nesting(r#"{"a\"[[":"\\","b":[["]"]]}"#), 3);
    }
}
