//! MCP message types for both protocol eras.
//!
//! Every object type keeps members it does not model in an `extra` map and
//! writes them back, so a decoded value re-encodes to equal JSON. Member
//! names on the wire are camelCase; Rust fields are snake_case, and `_meta`
//! is the field `meta`.

mod capabilities;
mod client_side;
mod common;
mod content;
mod lifecycle;
pub mod methods;
mod notifications;
mod stateless;
#[cfg(test)]
mod tests;
mod tools;
mod typed;

pub use capabilities::{
    ClientCapabilities, ElicitationCapability, ListChangedCapability, ResourcesCapability,
    SamplingCapability, ServerCapabilities, TASKS_EXTENSION,
};
pub use client_side::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ElicitationCompleteParams, ListRootsRequest, ListRootsResult, Root,
};
pub use common::{
    Annotations, CacheScope, EmptyParams, EmptyResult, Icon, Implementation, LoggingLevel, Meta,
    ProgressToken, RequestMeta, ResultType, Role,
};
pub use content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
    TextContent,
};
pub use lifecycle::{DiscoverResult, InitializeParams, InitializeResult, server_info_from};
pub use notifications::{CancelledParams, LoggingMessageParams, ProgressParams, SetLevelParams};
pub use stateless::{
    HeaderMismatchData, InputRequest, InputRequiredResult, MissingRequiredClientCapabilityData,
    UnsupportedProtocolVersionData, UrlElicitationRequiredData,
};
pub use tools::{
    CallToolParams, CallToolResult, ListToolsParams, ListToolsResult, Tool, ToolAnnotations,
    is_valid_tool_name,
};
pub use typed::{CallToolResponse, TypedDecodeError, parse, peek_result_type};
