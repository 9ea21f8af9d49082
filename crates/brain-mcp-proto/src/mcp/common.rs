//! Types shared across MCP messages.

use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;
use crate::wire::{open_enum, wire_struct};

/// A `_meta` object: free-form, keyed by (optionally prefixed) names.
pub type Meta = Map<String, Value>;

/// A progress token: a string or an integer, like a request id.
pub type ProgressToken = RequestId;

wire_struct! {
    /// Name and version of a client or server (`clientInfo`, `serverInfo`).
    #[derive(Default)]
    pub struct Implementation {
        /// Programmatic name.
        req name: String = "name",
        /// Version string.
        req version: String = "version",
        /// Display name (2025-06-18+).
        opt title: Option<String> = "title",
        /// Human description (2025-11-25+).
        opt description: Option<String> = "description",
        /// Icons (2025-11-25+).
        opt icons: Option<Vec<Icon>> = "icons",
        /// Home page (2025-11-25+).
        opt website_url: Option<String> = "websiteUrl",
    }
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

wire_struct! {
    /// An icon for a tool, server or resource (2025-11-25+).
    pub struct Icon {
        /// `https:` or `data:` URI.
        req src: String = "src",
        /// MIME type, if declared.
        opt mime_type: Option<String> = "mimeType",
        /// Sizes such as `48x48` or `any`.
        opt sizes: Option<Vec<String>> = "sizes",
        /// `light` or `dark`.
        opt theme: Option<String> = "theme",
    }
}

open_enum! {
    /// Who a message or annotation is meant for.
    pub enum Role {
        /// The human user.
        User = "user",
        /// The model.
        Assistant = "assistant",
    }
}

open_enum! {
    /// What kind of result a 2026-07-28 server returned (`resultType`).
    ///
    /// A result without the member is [`ResultType::Complete`].
    #[derive(Default)]
    pub enum ResultType {
        /// The final result.
        #[default]
        Complete = "complete",
        /// The server needs input first (an [`InputRequiredResult`](super::InputRequiredResult)).
        InputRequired = "input_required",
    }
}

open_enum! {
    /// Who may share a cached result (`cacheScope`).
    pub enum CacheScope {
        /// Shareable across users.
        Public = "public",
        /// Only within the same authorization context.
        Private = "private",
    }
}

open_enum! {
    /// Syslog-style logging levels, least to most severe.
    pub enum LoggingLevel {
        /// Debug detail.
        Debug = "debug",
        /// Informational.
        Info = "info",
        /// Normal but significant.
        Notice = "notice",
        /// Warning.
        Warning = "warning",
        /// Error.
        Error = "error",
        /// Critical.
        Critical = "critical",
        /// Action must be taken now.
        Alert = "alert",
        /// System unusable.
        Emergency = "emergency",
    }
}

wire_struct! {
    /// Hints on content blocks and resources.
    #[derive(Default)]
    pub struct Annotations {
        /// Intended audience.
        opt audience: Option<Vec<Role>> = "audience",
        /// Importance from 0 to 1.
        opt priority: Option<f64> = "priority",
        /// ISO 8601 timestamp (2025-06-18+).
        opt last_modified: Option<String> = "lastModified",
    }
}

wire_struct! {
    /// The `_meta` of a request: the progress token, the 2026-07-28
    /// per-request protocol fields, and any other keys (such as
    /// `brain.dev/scope`) in `extra`.
    #[derive(Default)]
    pub struct RequestMeta {
        /// Opt-in to progress notifications.
        opt progress_token: Option<ProgressToken> = "progressToken",
        /// `io.modelcontextprotocol/protocolVersion` (2026-07-28, required there).
        opt protocol_version: Option<String> = "io.modelcontextprotocol/protocolVersion",
        /// `io.modelcontextprotocol/clientCapabilities` (2026-07-28, required there).
        opt client_capabilities: Option<super::ClientCapabilities> = "io.modelcontextprotocol/clientCapabilities",
        /// `io.modelcontextprotocol/clientInfo` (2026-07-28).
        opt client_info: Option<Implementation> = "io.modelcontextprotocol/clientInfo",
        /// `io.modelcontextprotocol/logLevel` (2026-07-28).
        opt log_level: Option<LoggingLevel> = "io.modelcontextprotocol/logLevel",
    }
}

wire_struct! {
    /// Params that carry nothing but an optional `_meta` (ping, list_changed, discover...).
    #[derive(Default)]
    pub struct EmptyParams {
        /// Request or notification metadata.
        opt meta: Option<RequestMeta> = "_meta",
    }
}

wire_struct! {
    /// A result with no members besides `_meta` (`{}`), e.g. the answer to `ping`.
    #[derive(Default)]
    pub struct EmptyResult {
        /// 2026-07-28 servers mark every result.
        opt result_type: Option<ResultType> = "resultType",
        /// Result metadata.
        opt meta: Option<Meta> = "_meta",
    }
}
