//! Decoding raw params and results into typed values.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{CallToolResult, InputRequiredResult, ResultType};

/// Params or a result did not have the shape of the expected type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {type_name} at line {line}, column {column}: {message}")]
#[non_exhaustive]
pub struct TypedDecodeError {
    /// The type that was expected, e.g. `ListToolsResult`.
    pub type_name: &'static str,
    /// 1-based line inside the params or result.
    pub line: usize,
    /// 1-based column inside the params or result.
    pub column: usize,
    /// The parser's description.
    pub message: String,
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Decodes params or a result (as found in a [`Message`](crate::jsonrpc::Message)) into `T`.
pub fn parse<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Result<T, TypedDecodeError> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let text = e.to_string();
        let message = match text.rfind(" at line ") {
            Some(i) => text[..i].to_owned(),
            None => text,
        };
        TypedDecodeError {
            type_name: short_type_name::<T>(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}

/// The `resultType` of a result; absent, unreadable or non-object results
/// count as [`ResultType::Complete`].
pub fn peek_result_type(raw: &RawValue) -> ResultType {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "resultType")]
        result_type: Option<ResultType>,
    }
    let text = raw.get();
    // Without the key's name written out or an escape (a key could spell it with `\u`),
    // there is no `resultType`: most results, read here once per call.
    if !text.contains("resultType") && !text.as_bytes().contains(&b'\\') {
        return ResultType::default();
    }
    serde_json::from_str::<Peek>(text)
        .ok()
        .and_then(|p| p.result_type)
        .unwrap_or_default()
}

/// What a `tools/call` can answer in either era.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CallToolResponse {
    /// A final result.
    Complete(CallToolResult),
    /// The server needs input first (2026-07-28).
    InputRequired(InputRequiredResult),
    /// A `resultType` this crate does not know (e.g. an extension's `task`), verbatim.
    Other {
        /// The unknown `resultType`.
        result_type: String,
        /// The whole result.
        raw: Box<RawValue>,
    },
}

impl CallToolResponse {
    /// Decodes a `tools/call` result by its `resultType`.
    pub fn decode(raw: &RawValue) -> Result<Self, TypedDecodeError> {
        // Nearly every answer is a final result: read it in one pass, and look at
        // `resultType` first only when that pass finds another kind (or fails, so the
        // error is the one the kind calls for).
        if let Ok(result) = parse::<CallToolResult>(raw)
            && matches!(result.result_type, None | Some(ResultType::Complete))
        {
            return Ok(Self::Complete(result));
        }
        match peek_result_type(raw) {
            ResultType::Complete => parse(raw).map(Self::Complete),
            ResultType::InputRequired => parse(raw).map(Self::InputRequired),
            ResultType::Other(result_type) => Ok(Self::Other {
                result_type,
                raw: raw.to_owned(),
            }),
        }
    }
}
