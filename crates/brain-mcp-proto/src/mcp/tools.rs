//! `tools/list` and `tools/call`.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::wire::wire_struct;

use super::{CacheScope, ContentBlock, Icon, Meta, RequestMeta, ResultType};

wire_struct! {
    /// Params of `tools/list`.
    #[derive(Default)]
    pub struct ListToolsParams {
        /// The `nextCursor` of the previous page; absent for the first page.
        opt cursor: Option<String> = "cursor",
        /// Request metadata.
        opt meta: Option<RequestMeta> = "_meta",
    }
}

wire_struct! {
    /// Result of `tools/list` (a cacheable result in 2026-07-28).
    #[derive(Default)]
    pub struct ListToolsResult {
        /// This page of tools.
        def tools: Vec<Tool> = "tools",
        /// Opaque cursor of the next page; absent on the last page.
        opt next_cursor: Option<String> = "nextCursor",
        /// How long the page stays fresh, in milliseconds.
        opt ttl_ms: Option<i64> = "ttlMs",
        /// Who may share the cached page.
        opt cache_scope: Option<CacheScope> = "cacheScope",
        /// `complete` when present.
        opt result_type: Option<ResultType> = "resultType",
        /// Result metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// A tool a server offers.
    pub struct Tool {
        /// Programmatic name (see [`is_valid_tool_name`](super::is_valid_tool_name)).
        req name: String = "name",
        /// Display name.
        opt title: Option<String> = "title",
        /// Description for the model.
        opt description: Option<String> = "description",
        /// JSON Schema of the arguments, byte for byte as the server sent it.
        req input_schema: Box<RawValue> = "inputSchema",
        /// JSON Schema of `structuredContent`, verbatim.
        opt output_schema: Option<Box<RawValue>> = "outputSchema",
        /// Behaviour hints (untrusted).
        opt annotations: Option<ToolAnnotations> = "annotations",
        /// Icons (2025-11-25+).
        opt icons: Option<Vec<Icon>> = "icons",
        /// Task support (2025-11-25 only), kept loosely typed.
        opt execution: Option<Value> = "execution",
        /// Tool metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

impl Tool {
    /// The name to show a human: `title`, else `annotations.title`, else `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }

    /// `"optional"` or `"required"`: whether the tool may or must run as a task
    /// (`execution.taskSupport`, 2025-11-25). `None` when it forbids tasks, says nothing,
    /// or says something else.
    pub fn task_support(&self) -> Option<&'static str> {
        let support = self.execution.as_ref()?.get("taskSupport")?.as_str()?;
        ["optional", "required"]
            .into_iter()
            .find(|known| *known == support)
    }

    /// The input schema parsed as a [`Value`] (for header rules or validation).
    pub fn input_schema_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.input_schema.get())
    }
}

wire_struct! {
    /// Hints about a tool's behaviour; never trust them from an untrusted server.
    #[derive(Default, PartialEq)]
    pub struct ToolAnnotations {
        /// Display name.
        opt title: Option<String> = "title",
        /// Does not modify its environment (default false).
        opt read_only_hint: Option<bool> = "readOnlyHint",
        /// May destroy data (default true).
        opt destructive_hint: Option<bool> = "destructiveHint",
        /// Repeating a call has no extra effect (default false).
        opt idempotent_hint: Option<bool> = "idempotentHint",
        /// Talks to an open world of entities (default true).
        opt open_world_hint: Option<bool> = "openWorldHint",
    }
}

wire_struct! {
    /// Params of `tools/call`.
    #[derive(Default)]
    pub struct CallToolParams {
        /// The tool's name.
        req name: String = "name",
        /// The arguments object.
        opt arguments: Option<Map<String, Value>> = "arguments",
        /// Metadata: progress token, 2026 protocol fields, extra keys.
        opt meta: Option<RequestMeta> = "_meta",
        /// Task augmentation (2025-11-25), loosely typed.
        opt task: Option<Value> = "task",
        /// Answers to a previous `input_required` round (2026-07-28), by key.
        opt input_responses: Option<Map<String, Value>> = "inputResponses",
        /// The opaque state of a previous round, echoed exactly (2026-07-28).
        opt request_state: Option<String> = "requestState",
    }
}

wire_struct! {
    /// Result of `tools/call`.
    #[derive(Default)]
    pub struct CallToolResult {
        /// Unstructured content (required on the wire, may be empty).
        def content: Vec<ContentBlock> = "content",
        /// Structured result: any JSON value (an object before 2026-07-28), as the
        /// server wrote it, so its numbers keep every digit.
        opt structured_content: Option<Box<RawValue>> = "structuredContent",
        /// True when the tool itself failed.
        opt is_error: Option<bool> = "isError",
        /// `complete` when present.
        opt result_type: Option<ResultType> = "resultType",
        /// Result metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

impl CallToolResult {
    /// Whether the tool reported failure (`isError` true).
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// Tool-name rule of 2025-11-25: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
///
/// The rule is a recommendation; callers should warn, not reject.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}
