//! Answers to the server's requests for user input.
//!
//! Brain's own bindings refuse every such request (a Brain session has no user to
//! ask). An application that does have a user plugs a [`Responder`] in instead; the
//! conformance client uses [`DefaultsResponder`], a stand-in user who accepts every
//! form and leaves each field at the value the form suggests.

use serde_json::{Map, Value, json};

/// A refusal of a server request: a JSON-RPC error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The JSON-RPC error code.
    pub(crate) code: i64,
    /// Why.
    pub(crate) message: String,
}

/// Answers one server-to-client request (`elicitation/create`, `roots/list`, ...).
///
/// The same answers serve both eras: a handshake-era server sends the request on an
/// event stream and gets the answer POSTed back; a 2026-era server embeds it in an
/// `input_required` result and gets the answer in the retry's `inputResponses`.
pub(crate) trait Responder: Send + Sync {
    /// The result object for `method` with `params`, or a refusal.
    fn answer(&self, method: &str, params: &Value) -> Result<Value, Refusal>;
}

/// Accepts form elicitations with the schema's defaults, lists no roots, answers
/// pings, and refuses everything else (sampling, URL elicitation).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DefaultsResponder;

impl Responder for DefaultsResponder {
    fn answer(&self, method: &str, params: &Value) -> Result<Value, Refusal> {
        match method {
            "ping" => Ok(json!({})),
            "roots/list" => Ok(json!({"roots": []})),
            "elicitation/create" => {
                if params.get("mode").and_then(Value::as_str) == Some("url") {
                    return Ok(json!({"action": "decline"}));
                }
                let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
                Ok(json!({"action": "accept", "content": form_defaults(schema)}))
            }
            other => Err(Refusal {
                code: -32601,
                message: format!("this client does not answer {other}"),
            }),
        }
    }
}

/// The content a user who changes nothing would submit for a flat form schema:
/// each property's `default`, else its first `enum` value, else a neutral value of
/// its type (`true` for a yes/no question, which the user is taken to confirm).
pub(crate) fn form_defaults(schema: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return content;
    };
    for (name, property) in properties {
        if let Some(value) = field_default(property) {
            content.insert(name.clone(), value);
        }
    }
    content
}

fn field_default(property: &Value) -> Option<Value> {
    if let Some(default) = property.get("default") {
        return Some(default.clone());
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(first) = property
        .get("oneOf")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .and_then(|o| o.get("const"))
    {
        return Some(first.clone());
    }
    match property.get("type").and_then(Value::as_str)? {
        "boolean" => Some(Value::Bool(true)),
        "string" => Some(Value::String(String::new())),
        "integer" | "number" => Some(json!(0)),
        "array" => Some(json!([])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_defaults_with_their_types() {
        let schema = json!({"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},
            "age":{"type":"integer","default":30},
            "score":{"type":"number","default":95.5},
            "status":{"type":"string","enum":["active","inactive"]},
            "verified":{"type":"boolean"}
        }});
        let answer = DefaultsResponder
            .answer(
                "elicitation/create",
                &json!({"message":"m","requestedSchema":schema}),
            )
            .map_err(|r| r.message);
        assert_eq!(
            answer,
            Ok(json!({"action":"accept","content":{
                "name":"John Doe","age":30,"score":95.5,"status":"active","verified":true
            }}))
        );
    }

    #[test]
    fn refuses_sampling_and_declines_url_mode() {
        assert_eq!(
            DefaultsResponder
                .answer("sampling/createMessage", &json!({}))
                .map_err(|r| r.code),
            Err(-32601)
        );
        assert_eq!(
            DefaultsResponder
                .answer(
                    "elicitation/create",
                    &json!({"mode":"url","url":"https://x"})
                )
                .map_err(|r| r.code),
            Ok(json!({"action":"decline"}))
        );
    }
}
