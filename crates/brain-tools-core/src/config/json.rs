//! Parses the config text into a `serde_json::Value`, also noting keys that appear twice in
//! one object: plain parsing would keep the last silently, hiding a mistake.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::error::{field_path, index_path};

/// The parsed document and the paths of duplicated keys, in document order.
pub(crate) fn parse(text: &str) -> Result<(Value, Vec<String>), serde_json::Error> {
    let duplicates = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Node {
        path: String::new(),
        duplicates: &duplicates,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, duplicates.into_inner()))
}

/// The key serde_json uses to hand a number's exact text to a visitor when its
/// `arbitrary_precision` feature is on (the workspace turns it on so numbers stay exact).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// One value being read, and where it sits.
struct Node<'d> {
    path: String,
    duplicates: &'d RefCell<Vec<String>>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
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
                path: index_path(&self.path, items.len()),
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
                let text: String = map.next_value()?;
                return text
                    .parse::<serde_json::Number>()
                    .map(Value::Number)
                    .map_err(de::Error::custom);
            }
            first = false;
            let path = field_path(&self.path, &key);
            let child = Node {
                path: path.clone(),
                duplicates: self.duplicates,
            };
            let value = map.next_value_seed(child)?;
            if object.insert(key, value).is_some() {
                self.duplicates.borrow_mut().push(path);
            }
        }
        Ok(Value::Object(object))
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
        assert_eq!(duplicates, ["tools[0].x.k", "tools[0].name", "tools"]);
    }

    #[test]
    fn rejects_trailing_garbage_and_deep_nesting() {
        assert!(parse("{} x").is_err());
        assert!(parse(&"[".repeat(10_000)).is_err());
    }
}
