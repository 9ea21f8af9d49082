//! `_meta` keys and the builder for the 2026-07-28 request `_meta`.

use serde_json::Value;

use crate::mcp::{ClientCapabilities, Implementation, LoggingLevel, ProgressToken, RequestMeta};
use crate::version::ProtocolVersion;

/// Opt-in to progress notifications (all versions).
pub const PROGRESS_TOKEN: &str = "progressToken";
/// The request's protocol version (2026-07-28, required).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The request's client capabilities (2026-07-28, required).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's identity (2026-07-28).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The server's identity in result `_meta` (2026-07-28).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Opt-in to log messages for one request (2026-07-28).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Brain's own key naming the scope of a call; not a reserved key.
pub const BRAIN_SCOPE: &str = "brain.dev/scope";
/// W3C trace context: the `traceparent` of the call (MCP reserves the key).
pub const TRACEPARENT: &str = "traceparent";
/// W3C trace context: the `tracestate` of the call (MCP reserves the key).
pub const TRACESTATE: &str = "tracestate";

/// Who a Brain call belongs to, and the trace it is part of: the `_meta` keys Brain adds
/// to every `tools/call`.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct CallScope<'a> {
    /// The tenant calling.
    pub tenant_id: &'a str,
    /// The calling session.
    pub session_id: &'a str,
    /// The call.
    pub call_id: &'a str,
    /// The W3C `traceparent` and `tracestate`, checked by the caller.
    pub trace: Option<(&'a str, Option<&'a str>)>,
}

impl<'a> CallScope<'a> {
    /// The scope of call `call_id` of `session_id` for `tenant_id`, with no trace.
    pub fn new(tenant_id: &'a str, session_id: &'a str, call_id: &'a str) -> Self {
        Self {
            tenant_id,
            session_id,
            call_id,
            trace: None,
        }
    }

    /// The keys and values, each written as JSON once, for
    /// [`CallRequest::raw_meta`](crate::client::CallRequest::raw_meta):
    /// [`BRAIN_SCOPE`] with the three ids, then [`TRACEPARENT`] and [`TRACESTATE`].
    pub fn to_meta(&self) -> Vec<(&'static str, Box<serde_json::value::RawValue>)> {
        #[derive(serde::Serialize)]
        struct Ids<'a> {
            tenant_id: &'a str,
            session_id: &'a str,
            call_id: &'a str,
        }
        let ids = Ids {
            tenant_id: self.tenant_id,
            session_id: self.session_id,
            call_id: self.call_id,
        };
        let mut meta = Vec::with_capacity(3);
        // Strings only: writing them as JSON cannot fail.
        meta.extend(raw(&ids).map(|r| (BRAIN_SCOPE, r)));
        if let Some((parent, state)) = self.trace {
            meta.extend(raw(parent).map(|r| (TRACEPARENT, r)));
            meta.extend(state.and_then(raw).map(|r| (TRACESTATE, r)));
        }
        meta
    }
}

fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Option<Box<serde_json::value::RawValue>> {
    serde_json::value::to_raw_value(value).ok()
}

/// Builds the `_meta` of a 2026-07-28 request: version and capabilities
/// (required), client info, optional progress token and log level, and any
/// extra keys.
#[derive(Debug, Clone)]
pub struct RequestMetaBuilder {
    meta: RequestMeta,
}

impl RequestMetaBuilder {
    /// Starts with the two required keys.
    pub fn new(version: ProtocolVersion, capabilities: ClientCapabilities) -> Self {
        Self {
            meta: RequestMeta {
                protocol_version: Some(version.as_str().to_owned()),
                client_capabilities: Some(capabilities),
                ..RequestMeta::default()
            },
        }
    }

    /// Sets the client identity.
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.meta.client_info = Some(info);
        self
    }

    /// Sets the progress token.
    pub fn progress_token(mut self, token: ProgressToken) -> Self {
        self.meta.progress_token = Some(token);
        self
    }

    /// Asks for log messages at `level` and above.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.meta.log_level = Some(level);
        self
    }

    /// Adds any other key (e.g. [`BRAIN_SCOPE`]). Modelled keys go to their
    /// fields so they cannot be written twice.
    pub fn extra(mut self, key: impl Into<String>, value: Value) -> Self {
        let key = key.into();
        match key.as_str() {
            PROGRESS_TOKEN | PROTOCOL_VERSION | CLIENT_CAPABILITIES | CLIENT_INFO | LOG_LEVEL => {
                let mut tmp = serde_json::Map::new();
                tmp.insert(key, value);
                if let Ok(parsed) = serde_json::from_value::<RequestMeta>(Value::Object(tmp)) {
                    merge(&mut self.meta, parsed);
                }
            }
            _ => {
                self.meta.extra.insert(key, value);
            }
        }
        self
    }

    /// The finished `_meta`.
    pub fn build(self) -> RequestMeta {
        self.meta
    }
}

fn merge(into: &mut RequestMeta, from: RequestMeta) {
    into.progress_token = from.progress_token.or(into.progress_token.take());
    into.protocol_version = from.protocol_version.or(into.protocol_version.take());
    into.client_capabilities = from.client_capabilities.or(into.client_capabilities.take());
    into.client_info = from.client_info.or(into.client_info.take());
    into.log_level = from.log_level.or(into.log_level.take());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_scope_writes_the_ids_then_the_reserved_trace_keys() {
        let mut scope = CallScope::new("acme", "s\"1", "c-1");
        let keys = |scope: &CallScope<'_>| -> Vec<(String, Value)> {
            scope
                .to_meta()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), serde_json::from_str(v.get()).unwrap()))
                .collect()
        };
        assert_eq!(
            keys(&scope),
            [(
                "brain.dev/scope".to_owned(),
                json!({"tenant_id": "acme", "session_id": "s\"1", "call_id": "c-1"})
            )]
        );
        scope.trace = Some(("00-aa-bb-01", Some("k=v")));
        let written = keys(&scope);
        assert_eq!(written[1], ("traceparent".to_owned(), json!("00-aa-bb-01")));
        assert_eq!(written[2], ("tracestate".to_owned(), json!("k=v")));
        scope.trace = Some(("00-aa-bb-01", None));
        assert_eq!(keys(&scope).len(), 2);
    }

    #[test]
    fn builds_required_and_optional_keys() {
        let meta =
            RequestMetaBuilder::new(ProtocolVersion::V2026_07_28, ClientCapabilities::default())
                .client_info(Implementation::new("brain", "0.1.0"))
                .progress_token(ProgressToken::from("p7"))
                .extra(BRAIN_SCOPE, json!("team-a"))
                .extra(PROGRESS_TOKEN, json!(9))
                .build();
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            json!({
                "progressToken": 9,
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name":"brain","version":"0.1.0"},
                "brain.dev/scope": "team-a"
            })
        );
    }

    #[test]
    fn log_level_key() {
        let meta =
            RequestMetaBuilder::new(ProtocolVersion::V2026_07_28, ClientCapabilities::default())
                .log_level(LoggingLevel::Info)
                .build();
        assert_eq!(serde_json::to_value(&meta).unwrap()[LOG_LEVEL], "info");
    }
}
