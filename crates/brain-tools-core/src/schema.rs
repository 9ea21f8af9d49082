//! JSON Schema validators compiled once, at config load, and reused on every call.
//!
//! Schemas use JSON Schema 2020-12 unless they name another draft in `$schema`. Compilation
//! runs offline: a `$ref` to anything outside the schema itself is a compile error, never a
//! network or file read.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// The longest message kept for one violation; longer ones are cut at a character boundary
/// so that a huge argument value cannot blow up an error message.
const MAX_VIOLATION_MESSAGE: usize = 300;

/// The most memory one compiled pattern may take (the `regex` crate's size limits).
const REGEX_SIZE_LIMIT: usize = 2 * 1024 * 1024;

/// The most violations listed for one value; validation stops looking after these.
const MAX_VIOLATIONS: usize = 20;

/// A compiled JSON Schema validator. Cheap to clone: clones share the compiled form.
#[derive(Clone)]
pub struct CompiledSchema {
    validator: Arc<jsonschema::Validator>,
    costly: bool,
}

/// Why a schema was not compiled. `Display` is a one-line reason, suitable after a
/// config path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema does not compile (the validator's reason, on one line).
    #[error("{0}")]
    Invalid(String),
    /// A number whose exponent is too large to compare exactly (feature `exact-numbers`);
    /// it holds the number's start.
    #[error("the number {0}… has an exponent too large to compare exactly")]
    Uncomparable(String),
}

impl CompiledSchema {
    /// Compiles `schema` offline. Honours `$schema`; defaults to draft 2020-12.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        #[cfg(feature = "exact-numbers")]
        comparable_numbers(schema)?;
        // `pattern` and `patternProperties` use the `regex` crate: matching is linear in the
        // input whatever the pattern (no backtracking), and a pattern it cannot compile
        // (backreferences, lookaround) is refused here, at load.
        let mut options = jsonschema::options().offline().with_pattern_options(
            jsonschema::PatternOptions::regex()
                .size_limit(REGEX_SIZE_LIMIT)
                .dfa_size_limit(REGEX_SIZE_LIMIT),
        );
        if schema.get("$schema").is_none() {
            options = options.with_draft(jsonschema::Draft::Draft202012);
        }
        match options.build(schema) {
            Ok(validator) => Ok(Self {
                validator: Arc::new(validator),
                costly: is_costly(schema),
            }),
            Err(error) => Err(SchemaError::Invalid(one_line(&error.to_string()))),
        }
    }

    /// Whether checking a value can cost more than linear time in the value: the schema
    /// has references (which can make validation exponential), `uniqueItems` (quadratic)
    /// or regular expressions. The pipeline checks such values off the async workers.
    pub fn is_costly(&self) -> bool {
        self.costly
    }

    /// Whether both handles share one compiled validator (bindings with equal schemas do).
    pub fn shares_compiled_form(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.validator, &other.validator)
    }

    /// Whether `instance` satisfies the schema. Faster than [`Self::validate`] on success.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Checks `instance` and returns every violation, in the validator's order.
    pub fn validate(&self, instance: &Value) -> Result<(), Violations> {
        #[cfg(feature = "exact-numbers")]
        if let Err(message) = comparable_numbers(instance) {
            return Err(Violations(vec![Violation {
                instance_path: String::new(),
                message: message.to_string(),
            }]));
        }
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let list: Vec<Violation> = self
            .validator
            .iter_errors(instance)
            .take(MAX_VIOLATIONS)
            .map(|error| Violation {
                instance_path: crate::text::cut(
                    error.instance_path().as_str().to_owned(),
                    MAX_VIOLATION_MESSAGE,
                ),
                message: crate::text::cut(one_line(&error.to_string()), MAX_VIOLATION_MESSAGE),
            })
            .collect();
        if list.is_empty() {
            // `is_valid` and `iter_errors` disagree only if the library has a bug; report it
            // rather than letting an invalid value through.
            return Err(Violations(vec![Violation {
                instance_path: String::new(),
                message: "does not match the schema".to_owned(),
            }]));
        }
        Err(Violations(list))
    }
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

/// One schema violation: where in the instance, and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// JSON Pointer into the checked value (`""` is the value itself).
    pub instance_path: String,
    /// What is wrong, as the validator words it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.instance_path.is_empty() {
            write!(f, "(root): {}", self.message)
        } else {
            write!(f, "{}: {}", self.instance_path, self.message)
        }
    }
}

/// Every violation found in one value; never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violations(pub Vec<Violation>);

impl fmt::Display for Violations {
    /// All violations on one line, separated by `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

/// Whether `schema` uses a keyword that can make validation more than linear.
fn is_costly(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(key, value)| {
            matches!(
                key.as_str(),
                "$ref" | "$dynamicRef" | "$recursiveRef" | "pattern" | "patternProperties"
            ) || (key == "uniqueItems" && value == &Value::Bool(true))
                || is_costly(value)
        }),
        Value::Array(items) => items.iter().any(is_costly),
        _ => false,
    }
}

/// The largest exponent a number may have: with `exact-numbers`, the validator compares
/// numbers exactly only while their exponents fit its arithmetic (beyond,
/// `1e9223372036854775808` and `1e99999999999999999999` would compare equal). Without it,
/// every number it sees is an `f64`, whose exponents are small.
#[cfg(feature = "exact-numbers")]
const MAX_EXPONENT_DIGITS: usize = 15;

/// Checks that every number in `value` can be compared exactly: an exponent of at most
/// [`MAX_EXPONENT_DIGITS`] digits.
#[cfg(feature = "exact-numbers")]
fn comparable_numbers(value: &Value) -> Result<(), SchemaError> {
    match value {
        Value::Number(n) => {
            let text = n.as_str();
            let exponent = text.find(['e', 'E']).map(|at| {
                text[at + 1..]
                    .trim_start_matches(['+', '-'])
                    .trim_start_matches('0')
            });
            match exponent {
                Some(digits) if digits.len() > MAX_EXPONENT_DIGITS => Err(
                    SchemaError::Uncomparable(text[..text.len().min(24)].to_owned()),
                ),
                _ => Ok(()),
            }
        }
        Value::Array(items) => items.iter().try_for_each(comparable_numbers),
        Value::Object(map) => map.values().try_for_each(comparable_numbers),
        Value::Null | Value::Bool(_) | Value::String(_) => Ok(()),
    }
}

/// Joins the lines of a multi-line message so each error stays on one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_draft_is_2020_12() {
        // `prefixItems` exists only from 2020-12 on.
        let schema =
            CompiledSchema::compile(&json!({"prefixItems": [{"type": "string"}]})).unwrap();
        assert!(!schema.is_valid(&json!([1])));
        assert!(schema.is_valid(&json!(["a"])));
    }

    #[test]
    fn dollar_schema_selects_the_draft() {
        // In draft 7 an array `items` is a tuple form; `prefixItems` is an unknown keyword.
        let schema = CompiledSchema::compile(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "prefixItems": [{"type": "string"}],
            "items": [{"type": "integer"}]
        }))
        .unwrap();
        assert!(schema.is_valid(&json!([1])));
        assert!(!schema.is_valid(&json!(["a"])));
    }

    #[test]
    fn format_is_an_annotation_in_2020_12_and_asserted_in_draft_7() {
        let modern = CompiledSchema::compile(&json!({"format": "email"})).unwrap();
        assert!(modern.is_valid(&json!("not an email")));
        let draft7 = CompiledSchema::compile(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "format": "email"
        }))
        .unwrap();
        assert!(!draft7.is_valid(&json!("not an email")));
    }

    #[test]
    fn unknown_meta_schema_is_refused_offline() {
        let error = CompiledSchema::compile(&json!({"$schema": "https://example.com/meta"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("https://example.com/meta"), "{error}");
    }

    #[test]
    fn remote_ref_is_not_fetched() {
        let error = CompiledSchema::compile(&json!({"$ref": "https://example.com/s.json"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("https://example.com/s.json"), "{error}");
    }

    #[test]
    fn local_ref_compiles() {
        let schema = CompiledSchema::compile(&json!({
            "$defs": {"n": {"type": "integer"}},
            "properties": {"a": {"$ref": "#/$defs/n"}}
        }))
        .unwrap();
        assert!(!schema.is_valid(&json!({"a": "x"})));
    }

    #[test]
    fn every_violation_is_listed_with_its_path() {
        let schema = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
            "required": ["q", "n"]
        }))
        .unwrap();
        let errors = schema.validate(&json!({"n": 0, "q": 5})).unwrap_err();
        let paths: Vec<_> = errors.0.iter().map(|v| v.instance_path.as_str()).collect();
        assert!(paths.contains(&"/q"), "{errors}");
        assert!(paths.contains(&"/n"), "{errors}");
        let text = errors.to_string();
        assert!(text.contains("/q: 5 is not of type \"string\""), "{text}");
        assert!(
            text.contains("/n: 0 is less than the minimum of 1"),
            "{text}"
        );

        let missing = schema.validate(&json!({})).unwrap_err().to_string();
        assert!(
            missing.contains("(root): \"q\" is a required property"),
            "{missing}"
        );
        assert!(
            missing.contains("(root): \"n\" is a required property"),
            "{missing}"
        );
    }

    #[test]
    #[cfg(feature = "exact-numbers")]
    fn numbers_are_judged_exactly() {
        let num = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let max = CompiledSchema::compile(&json!({"maximum": num("9007199254740992")})).unwrap();
        assert!(max.is_valid(&num("9007199254740992")));
        assert!(!max.is_valid(&num("9007199254740993")));
        let big = "123456789012345678901234567890";
        let constant = CompiledSchema::compile(&json!({"const": num(big)})).unwrap();
        assert!(constant.is_valid(&num(big)));
        assert!(!constant.is_valid(&num("123456789012345678901234567891")));
        let decimal = CompiledSchema::compile(&json!({"exclusiveMaximum": num("0.1")})).unwrap();
        assert!(!decimal.is_valid(&num("0.1000000000000000000001")));
        assert!(decimal.is_valid(&num("0.0999999999999999999999")));
    }

    #[test]
    #[cfg(feature = "exact-numbers")]
    fn numbers_past_exact_comparison_are_refused() {
        let num = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let schema = CompiledSchema::compile(&json!({"maximum": num("1e400")})).unwrap();
        assert!(schema.validate(&num("1e401")).is_err());
        assert!(schema.validate(&num("1e399")).is_ok());
        let huge = schema.validate(&num("1e9223372036854775808")).unwrap_err();
        assert!(huge.to_string().contains("exponent too large"), "{huge}");
        assert!(
            CompiledSchema::compile(&json!({"maximum": num("1e9223372036854775807")})).is_err()
        );
    }

    #[test]
    #[cfg(not(feature = "exact-numbers"))]
    fn numbers_are_judged_as_the_nearest_f64_and_past_its_range_not_parsed() {
        let num = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        // 64-bit integers stay exact.
        let max = CompiledSchema::compile(&json!({"maximum": num("9007199254740992")})).unwrap();
        assert!(max.is_valid(&num("9007199254740992")));
        assert!(!max.is_valid(&num("9007199254740993")));
        // Beyond, the nearest f64 judges: these two are one apart but read the same.
        let big = "123456789012345678901234567890";
        let constant = CompiledSchema::compile(&json!({"const": num(big)})).unwrap();
        assert!(constant.is_valid(&num("123456789012345678901234567891")));
        // And a magnitude f64 cannot hold is no value to judge at all.
        assert!(serde_json::from_str::<Value>("1e400").is_err());
    }

    #[test]
    fn patterns_match_in_linear_time_and_backreferences_are_refused() {
        // A pattern that makes a backtracking engine take exponential time.
        let schema =
            CompiledSchema::compile(&json!({"type": "string", "pattern": "^(a+)+$"})).unwrap();
        let hostile = format!("{}b", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!schema.is_valid(&json!(hostile)));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        for backtracking in [r"^(?:(a|aa)\1?)+$", r"^(?=a)a$", r"(?<!x)y"] {
            let error = CompiledSchema::compile(&json!({"pattern": backtracking}))
                .unwrap_err()
                .to_string();
            assert!(!error.is_empty(), "{backtracking}");
        }
        let error = CompiledSchema::compile(&json!({"patternProperties": {r"(\w)\1": {}}}))
            .unwrap_err()
            .to_string();
        assert!(!error.is_empty());
    }

    #[test]
    fn long_messages_are_cut() {
        let schema = CompiledSchema::compile(&json!({"type": "integer"})).unwrap();
        let big = "é".repeat(1000);
        let errors = schema.validate(&json!(big)).unwrap_err();
        assert!(errors.0[0].message.len() <= MAX_VIOLATION_MESSAGE);
    }
}
