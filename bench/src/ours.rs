//! Our side: Brain's pipeline and MCP executor on one shared `McpClient`, as a host runs
//! them. Background cleanup (the session DELETE) runs as in production; the run waits for
//! it at the end so its cost is counted.

use std::sync::Arc;
use std::time::Duration;

use brain_mcp_bind::{McpClient, McpExecutor};
use brain_mcp_transport::ClientConfig;
use brain_tools_core::{Binding, NoProgress, ToolCall, run_call};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Bound on waiting for the last background DELETEs.
const FLUSH_WITHIN: Duration = Duration::from_secs(60);

/// One client, its executor and an `echo` binding on one endpoint.
pub(crate) struct Ours {
    client: McpClient,
    executor: McpExecutor,
    binding: Binding,
    call: ToolCall,
    cancel: CancellationToken,
}

/// The `echo` binding every side calls, as a host config would hold it.
pub(crate) fn echo_binding(url: &str) -> Result<Binding, String> {
    Binding::from_value(&json!({
        "name": "echo",
        "description": "Echoes its text.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        },
        "url": url,
        "mcp_tool": "echo",
        "tenants": ["bench"],
        "timeout_seconds": 30
    }))
    .map_err(|e| e.to_string())
}

impl Ours {
    /// A client for `url` trusting only `ca_pem` (the platform roots are left out on every
    /// side), with the default configuration changed by `tune`. The handshake era is set up
    /// front; the stateless era is learned by the first call.
    pub(crate) fn new(
        url: &str,
        handshake: bool,
        ca_pem: Option<&[u8]>,
        tune: impl FnOnce(&mut ClientConfig),
    ) -> Result<Self, String> {
        let mut config = ClientConfig::default();
        config.native_roots = false;
        tune(&mut config);
        if let Some(pem) = ca_pem {
            config.add_pem_roots(pem).map_err(|e| e.to_string())?;
        }
        let client = McpClient::with_config(config).map_err(|e| e.to_string())?;
        if handshake {
            client.set_era(url, brain_mcp_bind::Era::Handshake);
        }
        Ok(Self {
            executor: McpExecutor::new(client.clone()),
            client,
            binding: echo_binding(url)?,
            call: ToolCall::new(
                "bench",
                "bench-session",
                "bench-call",
                json!({"text": "hello from the call benchmark"}),
            ),
            cancel: CancellationToken::new(),
        })
    }

    /// One call through the whole pipeline.
    pub(crate) async fn call(self: Arc<Self>) -> Result<(), String> {
        let result = run_call(
            &self.binding,
            self.call.clone(),
            &self.executor,
            &NoProgress,
            &self.cancel,
        )
        .await;
        if result.is_error {
            return Err(format!("{:?}", result.error));
        }
        Ok(())
    }

    /// Waits for every background cleanup; false when some did not finish in time.
    pub(crate) async fn finish(&self) -> bool {
        self.client.flush(FLUSH_WITHIN).await
    }
}
