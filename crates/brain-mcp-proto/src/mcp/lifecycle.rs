//! Handshake (`initialize`) and discovery (`server/discover`).

use crate::wire::wire_struct;

use super::{
    CacheScope, ClientCapabilities, Implementation, Meta, RequestMeta, ResultType,
    ServerCapabilities,
};

wire_struct! {
    /// Params of `initialize` (handshake era).
    pub struct InitializeParams {
        /// The version the client asks for (its latest).
        req protocol_version: String = "protocolVersion",
        /// The client's capabilities.
        req capabilities: ClientCapabilities = "capabilities",
        /// The client's identity.
        req client_info: Implementation = "clientInfo",
        /// Request metadata.
        opt meta: Option<RequestMeta> = "_meta",
    }
}

wire_struct! {
    /// Result of `initialize`.
    pub struct InitializeResult {
        /// The version the server chose.
        req protocol_version: String = "protocolVersion",
        /// The server's capabilities.
        req capabilities: ServerCapabilities = "capabilities",
        /// The server's identity.
        req server_info: Implementation = "serverInfo",
        /// Hints for the model's system prompt.
        opt instructions: Option<String> = "instructions",
        /// Result metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Result of `server/discover` (2026-07-28), a cacheable result.
    ///
    /// `capabilities` defaults to empty when absent so that a sloppy peer
    /// still yields its version list.
    pub struct DiscoverResult {
        /// Protocol versions the server speaks.
        req supported_versions: Vec<String> = "supportedVersions",
        /// The server's capabilities.
        def capabilities: ServerCapabilities = "capabilities",
        /// Hints for the model's system prompt.
        opt instructions: Option<String> = "instructions",
        /// `complete` when present.
        opt result_type: Option<ResultType> = "resultType",
        /// How long the result stays fresh, in milliseconds.
        opt ttl_ms: Option<i64> = "ttlMs",
        /// Who may share the cached result.
        opt cache_scope: Option<CacheScope> = "cacheScope",
        /// Result metadata (`io.modelcontextprotocol/serverInfo` lives here).
        opt meta: Option<Meta> = "_meta",
    }
}

impl DiscoverResult {
    /// The server identity from `_meta`, if present and well formed.
    pub fn server_info(&self) -> Option<Implementation> {
        server_info_from(self.meta.as_ref())
    }
}

/// Reads `io.modelcontextprotocol/serverInfo` from a result `_meta`.
pub fn server_info_from(meta: Option<&Meta>) -> Option<Implementation> {
    let value = meta?.get(crate::meta::SERVER_INFO)?;
    serde_json::from_value(value.clone()).ok()
}
