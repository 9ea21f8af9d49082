//! Tool bindings, host configuration and the call pipeline every Brain tool runs inside.
//!
//! - [`HostConfig`] loads the host config and its [`Binding`]s, checking every rule at once.
//! - [`CompiledSchema`] holds the validators compiled at load time.
//! - [`Secret`] carries a bearer token without ever printing it.
//! - [`EndpointUrl`] is the one rule for endpoint URLs (config, discovery, calls), and
//!   [`check_headers`] the one rule for a binding's extra headers.
//! - [`ToolEvent`] and friends are the events the host consumes, with their JSON shapes.
//!
//! - [`run_call`] runs one [`ToolCall`] through the pipeline with a [`ToolExecutor`].
//!
//! This crate does no network IO: executors (such as the MCP binding) do, inside the
//! pipeline's rules.

#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]
mod arguments;
mod binding;
mod checks;
mod config;
mod event;
mod event_de;
mod exact;
mod executor;
mod headers;
mod json_keys;
mod oauth;
pub mod observe;
mod pipeline;
mod schema;
mod secret;
mod text;
mod trace;
mod url;

pub use arguments::Arguments;
pub use binding::{Binding, Endpoint, HttpEndpoint, McpEndpoint, TaskSupport};
pub use config::{ConfigError, ConfigErrors, HostConfig, MAX_CONFIG_BYTES, TokenStoreConfig};
pub use event::{
    ContentBlock, ErrorKind, MAX_ERROR_MESSAGE, ProgressEvent, ToolError, ToolEvent,
    ToolResultEvent,
};
pub use exact::{ExactNumber, JsonText, NotFinite};
pub use executor::{
    ExecContext, NoProgress, ProgressReporter, ProgressSink, SendMarker, ToolCall, ToolExecutor,
    ToolFailure, ToolOutput,
};
pub use headers::{
    HeaderError, HeadersError, MAX_HEADER_BYTES, MAX_HEADERS, check_header_name,
    check_header_value, check_headers,
};
pub use oauth::{OAuthConfig, SecretVar};
pub use pipeline::{run_call, run_call_with};
pub use schema::{CompiledSchema, SchemaError, Violation, Violations};
pub use secret::{Secret, SecretError};
pub use trace::{MAX_TRACESTATE, TraceContext, TraceContextError};
pub use url::{EndpointUrl, MAX_URL_LEN, UrlError};
