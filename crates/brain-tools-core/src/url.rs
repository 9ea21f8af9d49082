//! The one rule for an endpoint URL, shared by the config loader, discovery and the call
//! path: what it accepts is exactly what the HTTP layer can send to.
//!
//! The rule and its type live in `brain_mcp_proto::url`, the URL type every crate of the
//! workspace shares; this crate names them by their policy names. [`EndpointUrl::parse`]
//! is the strict (endpoint) rule: `http` or `https`, a host, an optional port, and a path
//! and query made only of the characters a URL may carry unencoded. Anything a stricter
//! HTTP library would refuse at call time (`"`, `<`, `>`, spaces, non-ASCII) is refused
//! here, at load, with the reason.

pub use brain_mcp_proto::url::{MAX_URL_LEN, Url as EndpointUrl, UrlError};
