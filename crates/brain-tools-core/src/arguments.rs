//! A call's arguments: the exact text the model wrote, when the host has it, and the
//! parsed value the input schema judges.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::exact::JsonText;

/// The arguments of one call.
///
/// Build them with [`Arguments::from_json`] from the model's text: that text is what the
/// server receives, digit for digit, whatever this build's serde_json does with numbers.
/// Built from a [`Value`], they are sent as that value writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Arguments {
    /// The text as given; `None` when built from a value.
    text: Option<JsonText>,
    /// The parsed value; `None` until parsed when built from text.
    value: Option<Value>,
}

impl Arguments {
    /// Arguments from the model's JSON text, kept as written. Only the syntax is checked
    /// here; the call's input schema judges the value (and refuses a number this build
    /// cannot parse, such as one beyond `f64`'s range).
    pub fn from_json(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        Ok(Self {
            text: Some(JsonText::parse(text)?),
            value: None,
        })
    }

    /// The exact text, when the arguments were built from text.
    pub fn text(&self) -> Option<&RawValue> {
        self.text.as_ref().map(JsonText::as_raw)
    }

    /// The parsed value, when there is one: built from a value, or parsed (the pipeline
    /// parses them to check them, so an executor always has it).
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }

    /// The parsed value when it is an object.
    pub fn object(&self) -> Option<&Map<String, Value>> {
        self.value.as_ref().and_then(Value::as_object)
    }

    /// Parses the text if that was not done yet, and takes the value out (put it back
    /// with [`Self::restore`]); the error says why the text cannot be judged, after the
    /// words "the arguments". A key written twice, or one serde_json reserves, is refused
    /// (see `json_keys`): the text sent must mean what was checked.
    pub(crate) fn take_parsed(&mut self) -> Result<Value, crate::exact::Unjudged> {
        match (self.value.take(), &self.text) {
            (Some(value), _) => Ok(value),
            (None, Some(text)) => {
                crate::json_keys::check_keys(text.as_str())
                    .map_err(crate::exact::Unjudged::Keys)?;
                text.to_value()
                    .map_err(|error| crate::exact::unjudged(&error))
            }
            (None, None) => Ok(Value::Null),
        }
    }

    /// Puts back the value [`Self::take_parsed`] took.
    pub(crate) fn restore(&mut self, value: Value) {
        self.value = Some(value);
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Self {
            text: None,
            value: Some(value),
        }
    }
}

impl From<Map<String, Value>> for Arguments {
    fn from(map: Map<String, Value>) -> Self {
        Value::Object(map).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kept_and_parsed_once_on_demand() {
        let mut args = Arguments::from_json(r#"{"n": 123456789012345678901234567890}"#).unwrap();
        assert!(args.value().is_none());
        let value = args.take_parsed().unwrap();
        args.restore(value);
        assert!(args.object().is_some_and(|o| o.contains_key("n")));
        assert_eq!(
            args.text().map(RawValue::get),
            Some(r#"{"n": 123456789012345678901234567890}"#)
        );
        assert!(Arguments::from_json("{").is_err());
    }

    #[test]
    fn a_key_written_twice_or_a_number_past_f64_cannot_be_judged() {
        let mut twice = Arguments::from_json(r#"{"a": {"p": "/etc", "p": "/ok"}}"#).unwrap();
        let said = twice.take_parsed().unwrap_err().to_string();
        assert!(said.contains("the key \"p\" twice"), "{said}");
        let mut reserved =
            Arguments::from_json(r#"{"n": {"$serde_json::private::Number": "5"}}"#).unwrap();
        let said = reserved.take_parsed().unwrap_err().to_string();
        assert!(said.contains("serde_json reserves"), "{said}");
        let mut past = Arguments::from_json(r#"{"n": 1e400}"#).unwrap();
        let parsed = past.take_parsed();
        #[cfg(not(feature = "exact-numbers"))]
        assert!(
            parsed
                .as_ref()
                .is_err_and(|said| said.to_string().contains("past the range of an f64")),
            "{parsed:?}"
        );
        #[cfg(feature = "exact-numbers")]
        assert!(parsed.is_ok(), "judged exactly: {parsed:?}");
    }

    #[test]
    fn built_from_a_value_there_is_no_text() {
        let args = Arguments::from(serde_json::json!({"a": 1}));
        assert!(args.text().is_none());
        assert_eq!(args.value(), Some(&serde_json::json!({"a": 1})));
    }
}
