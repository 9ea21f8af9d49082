//! Decoding bytes into borrowed JSON-RPC messages.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::error::{DecodeError, DecodeErrorKind, describe};
use super::{
    ErrorCode, ErrorObject, ErrorResponse, Incoming, Message, Notification, Request, RequestId,
    Response,
};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The members of a JSON-RPC object, each kept raw. A present `null` stays
/// `Some("null")` so it can be told apart from an absent member.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct WireError<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    code: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    message: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    data: Option<&'a RawValue>,
}

/// A string that borrows from the input unless it contains escapes.
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// Decodes one JSON-RPC message or a batch from `bytes`.
///
/// Rules: `"jsonrpc":"2.0"` is required; requests and responses need a
/// non-null integer or string id; an error response may have no id (a
/// missing, `null` or unreadable id gives `None`); exactly one of `result`
/// and `error` (a `null` beside the other counts as absent); `method`
/// excludes both. A single leading UTF-8 byte order mark is skipped, unknown
/// members are ignored and `params: null` is treated as absent. An empty
/// batch is an error; so is any bad element, whose index the error names.
/// Never panics.
pub fn decode(bytes: &[u8]) -> Result<Incoming<'_>, DecodeError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    match first_significant(bytes) {
        Some(b'{') => {
            let envelope: Envelope<'_> =
                serde_json::from_slice(bytes).map_err(|e| DecodeError::json(&e))?;
            classify(envelope).map(Incoming::Single)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_slice(bytes).map_err(|e| DecodeError::json(&e))?;
            if items.is_empty() {
                return Err(DecodeError::new(DecodeErrorKind::EmptyBatch));
            }
            items
                .into_iter()
                .enumerate()
                .map(|(i, raw)| decode_raw(raw).map_err(|e| e.at(i)))
                .collect::<Result<Vec<_>, _>>()
                .map(Incoming::Batch)
        }
        _ => {
            let raw: &RawValue =
                serde_json::from_slice(bytes).map_err(|e| DecodeError::json(&e))?;
            Err(DecodeError::new(DecodeErrorKind::NotAnObject {
                found: describe(raw),
            }))
        }
    }
}

/// Splits `bytes` into the raw text of each message without decoding them:
/// one element for a single object, one per element for a batch. Applies
/// the same BOM, empty-batch and shape rules as [`decode`]; pair it with
/// [`decode_raw`] when each message's own text must be kept or forwarded.
pub fn raw_messages(bytes: &[u8]) -> Result<Vec<&RawValue>, DecodeError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let json = |e: serde_json::Error| DecodeError::json(&e);
    match first_significant(bytes) {
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_slice(bytes).map_err(json)?;
            if items.is_empty() {
                return Err(DecodeError::new(DecodeErrorKind::EmptyBatch));
            }
            Ok(items)
        }
        _ => {
            let raw: &RawValue = serde_json::from_slice(bytes).map_err(json)?;
            if !raw.get().starts_with('{') {
                return Err(DecodeError::new(DecodeErrorKind::NotAnObject {
                    found: describe(raw),
                }));
            }
            Ok(vec![raw])
        }
    }
}

/// Decodes exactly one message from an already-separated raw JSON value.
pub fn decode_raw(raw: &RawValue) -> Result<Message<'_>, DecodeError> {
    let text = raw.get();
    if !text.starts_with('{') {
        return Err(DecodeError::new(DecodeErrorKind::NotAnObject {
            found: describe(raw),
        }));
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|e| DecodeError::json(&e))?;
    classify(envelope)
}

fn first_significant(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// The text of a JSON string without escapes, read in place (`raw` is valid JSON, so such
/// a string holds no quote or control character); `None` for anything else.
fn plain_string(raw: &RawValue) -> Option<&str> {
    let inner = raw.get().strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

fn string<'a>(raw: &'a RawValue, field: &'static str) -> Result<Cow<'a, str>, DecodeError> {
    if let Some(text) = plain_string(raw) {
        return Ok(Cow::Borrowed(text));
    }
    serde_json::from_str::<Str<'a>>(raw.get())
        .map(|s| s.0)
        .map_err(|_| DecodeError::field(field, "a string", raw))
}

fn request_id(raw: &RawValue) -> Result<RequestId, DecodeError> {
    // The usual shapes read in place: a string without escapes, a short plain integer.
    // Everything else (escapes, signs, big numbers, other types) takes the full reader.
    if let Some(text) = plain_string(raw) {
        return Ok(RequestId::String(text.to_owned()));
    }
    let text = raw.get();
    if (1..=18).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = text.parse::<i64>()
    {
        return Ok(RequestId::Number(n));
    }
    serde_json::from_str(text).map_err(|_| DecodeError::field("id", "an integer or a string", raw))
}

fn structured<'a>(
    raw: Option<&'a RawValue>,
    field: &'static str,
) -> Result<Option<&'a RawValue>, DecodeError> {
    match raw {
        None => Ok(None),
        Some(r) if is_null(r) => Ok(None),
        Some(r) if r.get().starts_with(['{', '[']) => Ok(Some(r)),
        Some(r) => Err(DecodeError::field(field, "an object or an array", r)),
    }
}

fn classify(env: Envelope<'_>) -> Result<Message<'_>, DecodeError> {
    match env.jsonrpc {
        None => return Err(DecodeError::new(DecodeErrorKind::MissingVersion)),
        Some(v) => {
            if string(v, "jsonrpc").ok().as_deref() != Some("2.0") {
                return Err(DecodeError::new(DecodeErrorKind::WrongVersion {
                    found: describe(v),
                }));
            }
        }
    }
    if let Some(method) = env.method {
        if env.result.is_some() || env.error.is_some() {
            return Err(DecodeError::new(DecodeErrorKind::MethodWithResult));
        }
        let method = string(method, "method")?;
        let params = structured(env.params, "params")?;
        return match env.id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(id) if is_null(id) => Err(DecodeError::new(DecodeErrorKind::NullId {
                kind: "request",
            })),
            Some(id) => Ok(Message::Request(Request {
                id: request_id(id)?,
                method,
                params,
            })),
        };
    }
    // JSON-RPC 1.0 style peers write the unused member as `null`; with the
    // other member present, such a `null` means "absent".
    let (result, error) = match (env.result, env.error) {
        (Some(r), Some(e)) if is_null(e) => (Some(r), None),
        (Some(r), Some(e)) if is_null(r) => (None, Some(e)),
        other => other,
    };
    match (result, error) {
        (Some(_), Some(_)) => Err(DecodeError::new(DecodeErrorKind::ResultAndError)),
        (None, None) => Err(DecodeError::new(DecodeErrorKind::NeitherResultNorError)),
        (Some(result), None) => match env.id {
            None => Err(DecodeError::new(DecodeErrorKind::MissingId)),
            Some(id) if is_null(id) => Err(DecodeError::new(DecodeErrorKind::NullId {
                kind: "response",
            })),
            Some(id) => Ok(Message::Response(Response {
                id: request_id(id)?,
                result,
            })),
        },
        (None, Some(error)) => {
            // An unreadable id on an error cannot be matched to a request;
            // keep the error (it is diagnostics) and drop the id.
            let id = env.id.and_then(|id| request_id(id).ok());
            Ok(Message::Error(ErrorResponse {
                id,
                error: error_object(error)?,
            }))
        }
    }
}

fn error_object(raw: &RawValue) -> Result<ErrorObject<'_>, DecodeError> {
    if !raw.get().starts_with('{') {
        return Err(DecodeError::field("error", "an object", raw));
    }
    let wire: WireError<'_> = serde_json::from_str(raw.get()).map_err(|e| DecodeError::json(&e))?;
    let code = match wire.code {
        Some(c) => serde_json::from_str::<i64>(c.get())
            .map_err(|_| DecodeError::field("error.code", "an integer", c))?,
        None => {
            return Err(DecodeError::new(DecodeErrorKind::InvalidField {
                field: "error.code",
                expected: "an integer",
                found: "nothing".to_owned(),
            }));
        }
    };
    // A missing message is tolerated: the error itself matters more than its text.
    let message = match wire.message {
        Some(m) => string(m, "error.message")?,
        None => Cow::Borrowed(""),
    };
    Ok(ErrorObject {
        code: ErrorCode(code),
        message,
        data: wire.data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_in_place_readers_agree_with_the_full_ones() {
        // Ids and strings read in place must be exactly what serde reads, and what the
        // shortcut does not take must still be read (or refused) by serde.
        for text in [
            "0",
            "7",
            "123456789012345678",
            "1234567890123456789",
            "9223372036854775807",
            "9223372036854775808",
            "-1",
            "1.0",
            "1e3",
            r#""""#,
            r#""call-1""#,
            r#""a\"b""#,
            r#""\u00e9""#,
            r#""é""#,
            "null",
            "true",
            "{}",
        ] {
            let raw: &RawValue = serde_json::from_str(text).expect("valid JSON");
            let full: Result<RequestId, _> = serde_json::from_str(text);
            assert_eq!(request_id(raw).ok(), full.ok(), "id {text}");
            let full: Result<Str<'_>, _> = serde_json::from_str(text);
            assert_eq!(
                string(raw, "f").ok(),
                full.ok().map(|s| s.0),
                "string {text}"
            );
        }
    }
}
