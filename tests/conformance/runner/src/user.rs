//! The stand-in user of the conformance runs: a [`Responder`] that accepts every form and
//! leaves each field at the value the form suggests.
//!
//! Brain's own bindings refuse every request for user input (a Brain session has no user
//! to ask); `brain-mcp-bind` lets an application with a user plug a responder in, and
//! this is the one the conformance scenarios that ask for input get.

use async_trait::async_trait;
use brain_mcp_bind::{Refusal, Responder, ServerRequest};
use brain_mcp_proto::jsonrpc::ErrorCode;
use serde_json::{Map, Value, json};

/// Accepts form elicitations with the schema's defaults, lists no roots, and refuses
/// everything else (sampling, URL elicitation is declined).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DefaultsResponder;

#[async_trait]
impl Responder for DefaultsResponder {
    async fn answer(&self, request: &ServerRequest<'_>) -> Result<Value, Refusal> {
        let (method, params) = (request.method, request.params);
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match method {
            "roots/list" => Ok(json!({"roots": []})),
            "elicitation/create" => {
                if params.get("mode").and_then(Value::as_str) == Some("url") {
                    return Ok(json!({"action": "decline"}));
                }
                let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
                Ok(json!({"action": "accept", "content": form_defaults(schema)}))
            }
            other => Err(Refusal::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("this client does not answer {other}"),
            )),
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

    fn raw(value: &Value) -> Box<serde_json::value::RawValue> {
        serde_json::value::to_raw_value(value)
            .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned())
    }

    fn answer(method: &str, params: &Value) -> Result<Value, Refusal> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let params = raw(params);
        let request = ServerRequest::new("t", "c", "tool", method, Some(&params));
        rt.block_on(DefaultsResponder.answer(&request))
    }

    #[test]
    fn fills_defaults_with_their_types() {
        let schema = json!({"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},
            "age":{"type":"integer","default":30},
            "score":{"type":"number","default":95.5},
            "status":{"type":"string","enum":["active","inactive"]},
            "verified":{"type":"boolean"}
        }});
        let answer = answer(
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
            answer("sampling/createMessage", &json!({})).map_err(|r| r.code),
            Err(ErrorCode::METHOD_NOT_FOUND)
        );
        assert_eq!(
            answer(
                "elicitation/create",
                &json!({"mode":"url","url":"https://x"})
            )
            .map_err(|r| r.code),
            Ok(json!({"action":"decline"}))
        );
    }
}
