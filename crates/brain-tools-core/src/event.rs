//! The events a tool call produces for the host, with their JSON shapes.
//!
//! Each event is one JSON object tagged by `"type"`:
//!
//! - Progress: `{"type":"tool.progress","call_id":"c1","progress":1,"total":3,"message":"…"}`;
//!   `total` and `message` appear only when known.
//! - Success: `{"type":"tool.result","call_id":"c1","is_error":false,"content":[…]}` plus
//!   `"structured_content":{…}` when the tool returned it. No `unknown_outcome`, no `error`.
//! - The tool's own error (it ran and reported failure):
//!   `{"type":"tool.result","call_id":"c1","is_error":true,"content":[…],"unknown_outcome":false}`
//!   (plus `structured_content` if sent). No `error` object: the model reads the content.
//! - Brain's failure (refused, transport, limits, …):
//!   `{"type":"tool.result","call_id":"c1","is_error":true,"content":[],"unknown_outcome":true|false,
//!   "error":{"kind":"timeout","message":"…"}}`. `content` is always present, and empty here.
//!
//! Content blocks: `{"type":"text","text":"…"}` and
//! `{"type":"image","data":"<base64>","mime_type":"image/png"}`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::exact::{ExactNumber, JsonText};

/// The most bytes of a failure's message (see [`ToolResultEvent::failure`]).
pub const MAX_ERROR_MESSAGE: usize = 4096;

/// One event of a tool call. Numbers and structured values keep the text the tool wrote,
/// so reading an event back takes serde_json's own deserializer (its `Deserialize` is in
/// `event_de`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ToolEvent {
    /// Live progress while the call runs.
    #[serde(rename = "tool.progress")]
    Progress(ProgressEvent),
    /// The call's one final result.
    #[serde(rename = "tool.result")]
    Result(ToolResultEvent),
}

/// Progress reported by the tool while the call runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProgressEvent {
    /// The call this progress belongs to.
    pub call_id: String,
    /// Work done so far; increases with each event of a call. Kept as sent (`1` stays `1`).
    pub progress: ExactNumber,
    /// Total work, when the tool knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<ExactNumber>,
    /// A human-readable note, when the tool sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The final result of a call. Build it with [`Self::success`], [`Self::tool_error`] or
/// [`Self::failure`] so that the shape matches the contract in the module docs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultEvent {
    /// The call this result belongs to.
    pub call_id: String,
    /// True for the tool's own errors and for Brain's failures.
    pub is_error: bool,
    /// What the model sees. Empty for Brain's failures.
    pub content: Vec<ContentBlock>,
    /// The tool's structured result as it wrote it, when it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<JsonText>,
    /// Present exactly when `is_error` is true: whether the tool may have acted anyway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_outcome: Option<bool>,
    /// Present when the failure is Brain's rather than the tool's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

impl ToolResultEvent {
    /// A successful result.
    pub fn success(
        call_id: impl Into<String>,
        content: Vec<ContentBlock>,
        structured_content: Option<JsonText>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            is_error: false,
            content,
            structured_content,
            unknown_outcome: None,
            error: None,
        }
    }

    /// The tool ran and reported an error itself (MCP `isError: true`).
    pub fn tool_error(
        call_id: impl Into<String>,
        content: Vec<ContentBlock>,
        structured_content: Option<JsonText>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            is_error: true,
            content,
            structured_content,
            unknown_outcome: Some(false),
            error: None,
        }
    }

    /// Brain could not complete the call. The message is cut to [`MAX_ERROR_MESSAGE`]
    /// bytes, so a failed call's event stays small whatever text a server sent.
    pub fn failure(
        call_id: impl Into<String>,
        kind: ErrorKind,
        message: impl Into<String>,
        unknown_outcome: bool,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            is_error: true,
            content: Vec::new(),
            structured_content: None,
            unknown_outcome: Some(unknown_outcome),
            error: Some(ToolError {
                kind,
                message: crate::text::cut_json(message.into(), MAX_ERROR_MESSAGE),
            }),
        }
    }

    /// The error kind, when this is one of Brain's failures.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.error.as_ref().map(|error| error.kind)
    }
}

/// A content block of a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image bytes, base64-encoded.
        data: String,
        /// The image's media type, such as `image/png`.
        mime_type: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// Brain's side of a failure: a machine-readable kind and a message.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What went wrong, for people and models. Never holds a secret.
    pub message: String,
}

/// The kinds of failure that are Brain's rather than the tool's.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The session's tenant may not use this tool.
    TenantNotAllowed,
    /// The arguments do not match the tool's input schema.
    InvalidArguments,
    /// The token's environment variable is unset or empty.
    MissingToken,
    /// The server could not be reached.
    ConnectFailed,
    /// The protocol handshake with the server failed.
    HandshakeFailed,
    /// The call did not finish within its timeout.
    Timeout,
    /// The caller cancelled the call.
    Cancelled,
    /// The connection dropped during the call.
    ConnectionLost,
    /// The server broke the protocol.
    ProtocolError,
    /// The server answered with a JSON-RPC error.
    RpcError,
    /// The server asked for user input, which Brain does not provide.
    UserInputRequired,
    /// The result held a content type Brain does not accept.
    UnsupportedContent,
    /// The result was larger than `max_output_bytes`.
    OutputTooLarge,
    /// The structured result did not match `output_schema`.
    OutputSchemaMismatch,
    /// The server refused the credentials (401 or 403), or no token could be obtained for
    /// it (metadata, issuer, token endpoint or scope); the tool was not called.
    AuthorizationFailed,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 15] = [
        Self::TenantNotAllowed,
        Self::InvalidArguments,
        Self::MissingToken,
        Self::ConnectFailed,
        Self::HandshakeFailed,
        Self::Timeout,
        Self::Cancelled,
        Self::ConnectionLost,
        Self::ProtocolError,
        Self::RpcError,
        Self::UserInputRequired,
        Self::UnsupportedContent,
        Self::OutputTooLarge,
        Self::OutputSchemaMismatch,
        Self::AuthorizationFailed,
    ];

    /// The serialized name, such as `tenant_not_allowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TenantNotAllowed => "tenant_not_allowed",
            Self::InvalidArguments => "invalid_arguments",
            Self::MissingToken => "missing_token",
            Self::ConnectFailed => "connect_failed",
            Self::HandshakeFailed => "handshake_failed",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::ConnectionLost => "connection_lost",
            Self::ProtocolError => "protocol_error",
            Self::RpcError => "rpc_error",
            Self::UserInputRequired => "user_input_required",
            Self::UnsupportedContent => "unsupported_content",
            Self::OutputTooLarge => "output_too_large",
            Self::OutputSchemaMismatch => "output_schema_mismatch",
            Self::AuthorizationFailed => "authorization_failed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn to_json(event: ToolEvent) -> Value {
        serde_json::to_value(event).unwrap()
    }

    #[test]
    fn progress_omits_absent_fields_and_keeps_integers() {
        let event = ToolEvent::Progress(ProgressEvent {
            call_id: "c1".into(),
            progress: 1_u64.into(),
            total: None,
            message: None,
        });
        assert_eq!(
            serde_json::to_string(&event).unwrap(),
            r#"{"type":"tool.progress","call_id":"c1","progress":1}"#
        );
        let full = ToolEvent::Progress(ProgressEvent {
            call_id: "c1".into(),
            progress: ExactNumber::try_from(1.5).unwrap(),
            total: Some(3_u64.into()),
            message: Some("half".into()),
        });
        assert_eq!(
            to_json(full),
            json!({"type":"tool.progress","call_id":"c1","progress":1.5,"total":3,"message":"half"})
        );
    }

    #[test]
    fn success_shape() {
        let event = ToolEvent::Result(ToolResultEvent::success(
            "c1",
            vec![
                ContentBlock::text("hi"),
                ContentBlock::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ],
            Some(json!({"a": 1}).into()),
        ));
        assert_eq!(
            to_json(event),
            json!({"type":"tool.result","call_id":"c1","is_error":false,
                "content":[{"type":"text","text":"hi"},
                           {"type":"image","data":"AAAA","mime_type":"image/png"}],
                "structured_content":{"a":1}})
        );
        let plain = ToolEvent::Result(ToolResultEvent::success("c2", vec![], None));
        assert_eq!(
            to_json(plain),
            json!({"type":"tool.result","call_id":"c2","is_error":false,"content":[]})
        );
    }

    #[test]
    fn tool_error_shape() {
        let event = ToolEvent::Result(ToolResultEvent::tool_error(
            "c1",
            vec![ContentBlock::text("no such file")],
            None,
        ));
        assert_eq!(
            to_json(event),
            json!({"type":"tool.result","call_id":"c1","is_error":true,
                "content":[{"type":"text","text":"no such file"}],"unknown_outcome":false})
        );
    }

    #[test]
    fn failure_shape_and_round_trip() {
        let result = ToolResultEvent::failure("c1", ErrorKind::Timeout, "took too long", true);
        let event = ToolEvent::Result(result.clone());
        let value = to_json(event.clone());
        assert_eq!(
            value,
            json!({"type":"tool.result","call_id":"c1","is_error":true,"content":[],
                "unknown_outcome":true,"error":{"kind":"timeout","message":"took too long"}})
        );
        let back: ToolEvent = serde_json::from_value(value).unwrap();
        assert_eq!(back, event);
        assert_eq!(result.error_kind(), Some(ErrorKind::Timeout));
    }

    #[test]
    fn error_kinds_serialize_as_snake_case() {
        for kind in ErrorKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
            assert_eq!(kind.to_string(), kind.as_str());
        }
        let names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "tenant_not_allowed",
                "invalid_arguments",
                "missing_token",
                "connect_failed",
                "handshake_failed",
                "timeout",
                "cancelled",
                "connection_lost",
                "protocol_error",
                "rpc_error",
                "user_input_required",
                "unsupported_content",
                "output_too_large",
                "output_schema_mismatch",
                "authorization_failed"
            ]
        );
    }
}
