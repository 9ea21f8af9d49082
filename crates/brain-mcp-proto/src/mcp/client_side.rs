//! Requests a server sends to the client (handshake era), and their results.
//!
//! In 2026-07-28 the same params travel inside an
//! [`InputRequiredResult`](super::InputRequiredResult) instead.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::wire::{open_enum, wire_struct};

use super::{Meta, RequestMeta, Role};

wire_struct! {
    /// Params of `elicitation/create`.
    pub struct ElicitRequestParams {
        /// `form` (also when absent) or `url` (2025-11-25+).
        opt mode: Option<String> = "mode",
        /// What to ask the user.
        req message: String = "message",
        /// Form mode: flat JSON Schema of the answer, verbatim.
        opt requested_schema: Option<Box<RawValue>> = "requestedSchema",
        /// URL mode: the page to open.
        opt url: Option<String> = "url",
        /// URL mode: the id of this elicitation (2025-11-25).
        opt elicitation_id: Option<String> = "elicitationId",
        /// Request metadata.
        opt meta: Option<RequestMeta> = "_meta",
    }
}

impl ElicitRequestParams {
    /// True for URL mode; anything else (including no mode) is form mode.
    pub fn is_url_mode(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

open_enum! {
    /// The user's answer to an elicitation.
    pub enum ElicitAction {
        /// Accepted (form: `content` holds the answer).
        Accept = "accept",
        /// Declined explicitly.
        Decline = "decline",
        /// Dismissed without a choice.
        Cancel = "cancel",
    }
}

wire_struct! {
    /// Result of `elicitation/create`.
    pub struct ElicitResult {
        /// What the user did.
        req action: ElicitAction = "action",
        /// The form answer, only with `accept`.
        opt content: Option<Map<String, Value>> = "content",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Params of `sampling/createMessage`, loosely typed where the schema is large.
    pub struct CreateMessageRequestParams {
        /// The conversation (`SamplingMessage` objects), kept as JSON.
        def messages: Vec<Value> = "messages",
        /// Token limit.
        req max_tokens: i64 = "maxTokens",
        /// System prompt.
        opt system_prompt: Option<String> = "systemPrompt",
        /// Model preferences, kept as JSON.
        opt model_preferences: Option<Value> = "modelPreferences",
        /// `none`, `thisServer` or `allServers`.
        opt include_context: Option<String> = "includeContext",
        /// Sampling temperature.
        opt temperature: Option<f64> = "temperature",
        /// Stop sequences.
        opt stop_sequences: Option<Vec<String>> = "stopSequences",
        /// Provider-specific metadata.
        opt metadata: Option<Value> = "metadata",
        /// Tools offered to the model (2025-11-25), kept as JSON.
        opt tools: Option<Vec<Value>> = "tools",
        /// Tool choice (2025-11-25), kept as JSON.
        opt tool_choice: Option<Value> = "toolChoice",
        /// Request metadata.
        opt meta: Option<RequestMeta> = "_meta",
    }
}

wire_struct! {
    /// Result of `sampling/createMessage`.
    pub struct CreateMessageResult {
        /// Normally `assistant`.
        req role: Role = "role",
        /// One content block, or (2025-11-25) an array of them; kept as JSON.
        req content: Value = "content",
        /// The model that answered.
        req model: String = "model",
        /// Why generation stopped.
        opt stop_reason: Option<String> = "stopReason",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Result of `roots/list`.
    #[derive(Default)]
    pub struct ListRootsResult {
        /// The client's roots.
        def roots: Vec<Root> = "roots",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// A filesystem root the client exposes.
    pub struct Root {
        /// A `file://` URI.
        req uri: String = "uri",
        /// Display name.
        opt name: Option<String> = "name",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

/// Params of `roots/list` (only `_meta`).
pub type ListRootsRequest = super::EmptyParams;

wire_struct! {
    /// Params of `notifications/elicitation/complete` (2025-11-25): a URL-mode
    /// elicitation finished.
    pub struct ElicitationCompleteParams {
        /// The `elicitationId` of the finished request.
        req elicitation_id: String = "elicitationId",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}
