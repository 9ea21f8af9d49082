//! Arguments for a tool the scenario does not describe: what a form left at its defaults
//! would hold.

use serde_json::{Map, Value, json};

/// One value per top-level property of `schema`: its `default`, else its first `enum`
/// value, else a plain value of its type; properties of other types are left out.
pub(crate) fn sample(schema: &Value) -> Map<String, Value> {
    let mut args = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return args;
    };
    for (name, property) in properties {
        let value = if let Some(d) = property.get("default") {
            d.clone()
        } else if let Some(first) = property
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            first.clone()
        } else {
            match property.get("type").and_then(Value::as_str) {
                Some("string") => json!("sample"),
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                _ => continue,
            }
        };
        args.insert(name.clone(), value);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_simple_types() {
        let schema = json!({"properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},
            "mode":{"type":"string","enum":["fast","slow"]},
            "d":{"type":"string","default":"x"},
            "o":{"type":"object"}
        }});
        assert_eq!(
            Value::Object(sample(&schema)),
            json!({"region":"sample","n":1,"f":1.5,"b":true,"mode":"fast","d":"x"})
        );
    }
}
