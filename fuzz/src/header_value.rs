//! `x-mcp-header` values (`brain_mcp_proto::headers`): encoding round-trips, what it
//! produces is always a valid header value, and the base64 form is canonical.
//!
//! Input layout: UTF-8 text, used as a string to encode, as a header value to decode, and,
//! when it is JSON, as values to encode and a schema to read annotations from. A JSON array
//! `[schema, arguments]` checks the header values derived from those arguments.

use brain_mcp_proto::headers::{
    MCP_PARAM_PREFIX, decode_header_value, encode_header_str, encode_header_value, is_token,
    param_header_values, param_headers,
};
use serde_json::Value;

/// The start and the end of the base64 form.
const SENTINEL: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Checks the header rules on one fuzz input.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    string_round_trip(text);
    canonical_decode(text);
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        every_scalar(&value);
        match &value {
            Value::Array(pair) if pair.len() == 2 => annotations(&pair[0], &pair[1]),
            _ => annotations(&value, &value),
        }
    }
}

/// decode(encode(s)) == s, and the encoding is a header value as sent.
fn string_round_trip(s: &str) {
    let encoded = encode_header_str(s);
    assert_valid_header(&encoded);
    assert_eq!(
        decode_header_value(&encoded).as_deref(),
        Ok(s),
        "{encoded:?}"
    );
}

/// A value in the base64 form that decodes, and whose text needs that form, is exactly
/// what we would send for that text: base64 decoding accepts one spelling only.
fn canonical_decode(header: &str) {
    let sentinel_form = header
        .strip_prefix(SENTINEL)
        .is_some_and(|rest| rest.ends_with(SUFFIX));
    if let (true, Ok(decoded)) = (sentinel_form, decode_header_value(header)) {
        let again = encode_header_str(&decoded);
        if again.starts_with(SENTINEL) {
            assert_eq!(again, header, "two spellings decode to {decoded:?}");
        }
    }
}

/// Each scalar in the document (and each key) encodes as the value it is.
fn every_scalar(value: &Value) {
    match value {
        Value::Array(items) => items.iter().for_each(every_scalar),
        Value::Object(map) => {
            for (key, item) in map {
                string_round_trip(key);
                every_scalar(item);
            }
        }
        Value::Null => assert_eq!(encode_header_value(value), None),
        Value::Bool(b) => {
            assert_eq!(encode_header_value(value), Some(b.to_string()));
        }
        Value::String(s) => {
            assert_eq!(encode_header_value(value), Some(encode_header_str(s)));
        }
        Value::Number(n) => {
            let Some(header) = encode_header_value(value) else {
                panic!("number {n} gave no header");
            };
            assert_valid_header(&header);
            if let Some(i) = n.as_i64() {
                assert_eq!(header.parse::<i64>(), Ok(i));
            } else if let Some(u) = n.as_u64() {
                assert_eq!(header.parse::<u64>(), Ok(u));
            } else if let Some(f) = n.as_f64() {
                assert_eq!(header.parse::<f64>(), Ok(f), "{n} sent as {header:?}");
            }
        }
    }
}

/// Annotations found in a schema have well-formed, distinct names, and the values they
/// pick out of the arguments are valid header values.
fn annotations(schema: &Value, arguments: &Value) {
    let Ok(headers) = param_headers(schema) else {
        return;
    };
    let mut seen = std::collections::HashSet::new();
    for header in &headers {
        let name = header.header_name.strip_prefix(MCP_PARAM_PREFIX);
        assert!(name.is_some_and(is_token), "{:?}", header.header_name);
        assert!(!header.path.is_empty(), "an annotation at the root");
        assert!(
            seen.insert(header.header_name.to_ascii_lowercase()),
            "{:?} twice",
            header.header_name
        );
    }
    if let Value::Object(arguments) = arguments {
        for (name, value) in param_header_values(&headers, arguments) {
            assert!(headers.iter().any(|h| h.header_name == name));
            assert_valid_header(&value);
        }
    }
}

/// Visible ASCII and inner spaces only: what HTTP carries unchanged (no trimming).
fn assert_valid_header(value: &str) {
    assert!(
        value.bytes().all(|b| (0x20..=0x7E).contains(&b))
            && !value.starts_with(' ')
            && !value.ends_with(' '),
        "not a header value as sent: {value:?}"
    );
}
