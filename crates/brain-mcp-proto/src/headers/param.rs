//! Finding and checking `x-mcp-header` annotations in a tool's input schema.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{MCP_PARAM_PREFIX, X_MCP_HEADER, encode_header_value, is_token};

/// Deepest schema nesting examined; deeper schemas are rejected.
const MAX_DEPTH: usize = 64;

/// The JSON type of a mirrored parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One parameter a tool wants mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ParamHeader {
    /// The full header name, e.g. `Mcp-Param-Region`.
    pub header_name: String,
    /// Property names from the schema root down to the parameter.
    pub path: Vec<String>,
    /// The parameter's declared type.
    pub kind: ParamKind,
}

/// Why a schema's `x-mcp-header` annotations make the tool unusable over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid x-mcp-header at {location}: {problem}")]
#[non_exhaustive]
pub struct InvalidParamHeader {
    /// JSON-pointer-like location of the annotated schema, e.g. `/properties/region`.
    pub location: String,
    /// What is wrong.
    pub problem: ParamHeaderProblem,
}

/// The specific rule an annotation breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamHeaderProblem {
    /// The annotation is not a string, or is empty.
    #[error("the annotation must be a non-empty string")]
    Empty,
    /// The name has characters outside an RFC 9110 token.
    #[error("{0:?} is not an HTTP token")]
    NotAToken(String),
    /// Two annotations differ only in case (or not at all).
    #[error("{0:?} is declared more than once (names are case-insensitive)")]
    Duplicate(String),
    /// The property is not typed `string`, `integer` or `boolean`.
    #[error("only string, integer and boolean properties may be mirrored")]
    NotPrimitive,
    /// The annotation sits on the root schema.
    #[error("the root schema cannot be mirrored")]
    AtRoot,
    /// The annotation is reachable only through something other than `properties`.
    #[error("annotations must be reachable from the root through `properties` only")]
    NotThroughProperties,
    /// The schema nests too deeply to check.
    #[error("the schema nests more than {MAX_DEPTH} levels")]
    TooDeep,
}

/// Keywords whose values are data, not schemas: never searched.
const DATA_KEYWORDS: [&str; 4] = ["default", "const", "enum", "examples"];
/// Keywords whose values map names to schemas (the names are not keywords).
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

struct Walker {
    found: Vec<ParamHeader>,
    seen: HashSet<String>,
}

struct Location<'a>(&'a [String]);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        for part in self.0 {
            write!(f, "/{}", part.replace('~', "~0").replace('/', "~1"))?;
        }
        Ok(())
    }
}

fn fail(location: &[String], problem: ParamHeaderProblem) -> InvalidParamHeader {
    InvalidParamHeader {
        location: Location(location).to_string(),
        problem,
    }
}

impl Walker {
    /// `props` is the property path while the node is reachable through
    /// `properties` only; `loc` is the full location for errors.
    fn walk(
        &mut self,
        node: &Value,
        props: Option<&[String]>,
        loc: &mut Vec<String>,
    ) -> Result<(), InvalidParamHeader> {
        if loc.len() > MAX_DEPTH {
            return Err(fail(loc, ParamHeaderProblem::TooDeep));
        }
        match node {
            Value::Object(map) => {
                if let Some(annotation) = map.get(X_MCP_HEADER) {
                    self.annotation(map, annotation, props, loc)?;
                }
                for (key, value) in map {
                    if key == X_MCP_HEADER || DATA_KEYWORDS.contains(&key.as_str()) {
                        continue;
                    }
                    loc.push(key.clone());
                    match value {
                        Value::Object(children) if SCHEMA_MAPS.contains(&key.as_str()) => {
                            for (name, child) in children {
                                let child_props = match (key.as_str(), props) {
                                    ("properties", Some(p)) => {
                                        Some([p, std::slice::from_ref(name)].concat())
                                    }
                                    _ => None,
                                };
                                loc.push(name.clone());
                                self.walk(child, child_props.as_deref(), loc)?;
                                loc.pop();
                            }
                        }
                        other => self.walk(other, None, loc)?,
                    }
                    loc.pop();
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    loc.push(i.to_string());
                    self.walk(item, None, loc)?;
                    loc.pop();
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn annotation(
        &mut self,
        schema: &Map<String, Value>,
        annotation: &Value,
        props: Option<&[String]>,
        loc: &[String],
    ) -> Result<(), InvalidParamHeader> {
        let path = match props {
            None => return Err(fail(loc, ParamHeaderProblem::NotThroughProperties)),
            Some([]) => return Err(fail(loc, ParamHeaderProblem::AtRoot)),
            Some(p) => p,
        };
        let name = match annotation {
            Value::String(s) if !s.is_empty() => s,
            _ => return Err(fail(loc, ParamHeaderProblem::Empty)),
        };
        if !is_token(name) {
            return Err(fail(loc, ParamHeaderProblem::NotAToken(name.clone())));
        }
        let kind = match schema.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => return Err(fail(loc, ParamHeaderProblem::NotPrimitive)),
        };
        if !self.seen.insert(name.to_ascii_lowercase()) {
            return Err(fail(loc, ParamHeaderProblem::Duplicate(name.clone())));
        }
        self.found.push(ParamHeader {
            header_name: format!("{MCP_PARAM_PREFIX}{name}"),
            path: path.to_vec(),
            kind,
        });
        Ok(())
    }
}

/// Collects the `x-mcp-header` parameters of a tool's input schema (in
/// property-name order), or says why the annotations are invalid. An invalid
/// annotation invalidates the whole tool for HTTP use.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, InvalidParamHeader> {
    if !may_annotate(input_schema, 0) {
        // Nothing to find and nothing deep enough to refuse: most schemas, on every call.
        return Ok(Vec::new());
    }
    let mut walker = Walker {
        found: Vec::new(),
        seen: HashSet::new(),
    };
    walker.walk(input_schema, Some(&[]), &mut Vec::new())?;
    Ok(walker.found)
}

/// Whether the walk could find an annotation or refuse the schema: an `x-mcp-header` key
/// anywhere, or nesting deep enough that the walk's location could pass [`MAX_DEPTH`]
/// (each level of nesting adds one or two steps to it). Allocates nothing.
fn may_annotate(node: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH / 2 {
        return true;
    }
    match node {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key == X_MCP_HEADER || may_annotate(value, depth + 1)),
        Value::Array(items) => items.iter().any(|item| may_annotate(item, depth + 1)),
        _ => false,
    }
}

/// The `(header name, value)` pairs for one call. Parameters whose value is
/// absent, `null`, an array or an object are left out.
pub fn param_header_values(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    param_header_values_exact(headers, arguments, None)
}

/// [`param_header_values`] for arguments that also have their exact text (the same
/// object, as the body sends it): a number's header holds the digits the body holds,
/// not the nearest `f64`'s, unless it is integral (`42.0` is sent as `42`).
pub fn param_header_values_exact(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
    text: Option<&RawValue>,
) -> Vec<(String, String)> {
    // Each exact lookup reads the text along its path; a schema's headers are the
    // server's to declare, so only so many read it.
    let mut lookups = 0;
    headers
        .iter()
        .filter_map(|h| {
            let (first, rest) = h.path.split_first()?;
            let mut value = arguments.get(first)?;
            for key in rest {
                value = value.as_object()?.get(key)?;
            }
            let encoded = encode_header_value(value)?;
            let exact = match value {
                Value::Number(_)
                    if !is_integer(&encoded)
                        && lookups < MAX_EXACT_LOOKUPS
                        && h.path.len() <= MAX_EXACT_DEPTH =>
                {
                    lookups += 1;
                    text.and_then(|text| number_text_at(text, &h.path))
                }
                _ => None,
            };
            Some((h.header_name.clone(), exact.unwrap_or(encoded)))
        })
        .collect()
}

/// The most number headers of one call whose digits are read from the text; the rest
/// are written from the parsed value.
const MAX_EXACT_LOOKUPS: usize = 16;

/// The deepest path whose number is read from the text.
const MAX_EXACT_DEPTH: usize = 8;

/// Whether `text` is written as an integer.
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The text of the number at `path` in the object `text`.
fn number_text_at(text: &RawValue, path: &[String]) -> Option<String> {
    let mut at = text;
    for key in path {
        let members: BTreeMap<String, &RawValue> = serde_json::from_str(at.get()).ok()?;
        at = *members.get(key)?;
    }
    let number = at.get();
    number
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        .then(|| number.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problem(schema: Value) -> ParamHeaderProblem {
        param_headers(&schema).unwrap_err().problem
    }

    #[test]
    fn finds_nested_properties_in_order() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "flag":{"type":"boolean","x-mcp-header":"Method"},
            "plain":{"type":"number"},
            "x-mcp-header":{"type":"string"}
        },"default":{"x-mcp-header":"ignored"}});
        let found = param_headers(&schema).unwrap();
        let names: Vec<_> = found.iter().map(|h| h.header_name.as_str()).collect();
        // serde_json maps iterate in key order.
        assert_eq!(
            names,
            ["Mcp-Param-Method", "Mcp-Param-N", "Mcp-Param-Region"]
        );
        assert_eq!(found[1].path, ["opts", "n"]);
        assert_eq!(found[1].kind, ParamKind::Integer);

        let args = json!({"region":"Hello, 世界","opts":{"n":42},"flag":null});
        let values = param_header_values(&found, args.as_object().unwrap());
        assert_eq!(
            values,
            [
                ("Mcp-Param-N".to_owned(), "42".to_owned()),
                (
                    "Mcp-Param-Region".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                )
            ]
        );
    }

    #[test]
    fn rejects_each_invalid_form() {
        let prop = |p: Value| json!({"type":"object","properties":{"a":p}});
        assert_eq!(
            problem(prop(json!({"type":"string","x-mcp-header":""}))),
            ParamHeaderProblem::Empty
        );
        assert_eq!(
            problem(prop(json!({"type":"string","x-mcp-header":7}))),
            ParamHeaderProblem::Empty
        );
        for bad in ["Reg ion", "Reg:ion", "Région", "Region\t1"] {
            assert!(matches!(
                problem(prop(json!({"type":"string","x-mcp-header":bad}))),
                ParamHeaderProblem::NotAToken(_)
            ));
        }
        for ty in [
            json!("object"),
            json!("array"),
            json!("null"),
            json!("number"),
            json!(["string", "null"]),
        ] {
            assert_eq!(
                problem(prop(json!({"type":ty,"x-mcp-header":"A"}))),
                ParamHeaderProblem::NotPrimitive
            );
        }
        assert_eq!(
            problem(prop(json!({"x-mcp-header":"A"}))),
            ParamHeaderProblem::NotPrimitive
        );
        let dup = json!({"type":"object","properties":{
            "a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}});
        assert_eq!(
            problem(dup),
            ParamHeaderProblem::Duplicate("myfield".into())
        );
        assert_eq!(
            problem(json!({"type":"object","x-mcp-header":"Root"})),
            ParamHeaderProblem::AtRoot
        );
        for via in [
            json!({"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}),
            json!({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"O"}}}]}),
            json!({"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}),
        ] {
            assert_eq!(problem(via), ParamHeaderProblem::NotThroughProperties);
        }
    }

    #[test]
    fn error_names_the_location() {
        let e = param_headers(&json!({"properties":{"a/b":{"type":"object","x-mcp-header":"X"}}}))
            .unwrap_err();
        assert_eq!(e.location, "/properties/a~1b");
        assert_eq!(
            e.to_string(),
            "invalid x-mcp-header at /properties/a~1b: only string, integer and boolean properties may be mirrored"
        );
    }

    #[test]
    fn deep_schemas_are_bounded() {
        let mut schema = json!({"type":"string"});
        for _ in 0..200 {
            schema = json!({"not": schema});
        }
        assert_eq!(problem(schema), ParamHeaderProblem::TooDeep);
    }

    #[test]
    fn the_shortcut_agrees_with_the_walk() {
        // Schemas without annotations, shallow and deep, nested through every kind of
        // step: the shortcut must give what the full walk gives.
        let mut cases = vec![json!({"type":"object","properties":{"a":{"type":"string"}}})];
        for depth in [10, 20, 31, 32, 33, 40, 64, 65, 100] {
            for step in ["not", "properties", "items"] {
                let mut schema = json!({"type":"string"});
                for _ in 0..depth {
                    schema = match step {
                        "properties" => json!({"properties": {"p": schema}}),
                        "items" => json!({"anyOf": [schema]}),
                        _ => json!({"not": schema}),
                    };
                }
                cases.push(schema);
            }
        }
        for schema in cases {
            let mut walker = Walker {
                found: Vec::new(),
                seen: HashSet::new(),
            };
            let walked = walker
                .walk(&schema, Some(&[]), &mut Vec::new())
                .map(|()| walker.found);
            assert_eq!(param_headers(&schema), walked);
        }
    }
}
