//! Our path: one tool call through Brain's pipeline and the MCP executor.

use std::time::Duration;

use brain_mcp_bind::{McpClient, McpExecutor};
use brain_tools_core::{Binding, NoProgress, ToolCall, run_call};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Bound on waiting for a call's background DELETE.
const FLUSH_WITHIN: Duration = Duration::from_secs(5);

/// A client, its executor, and one `echo` binding on one endpoint.
pub struct OurClient {
    client: McpClient,
    executor: McpExecutor,
    binding: Binding,
    call: ToolCall,
    cancel: CancellationToken,
    handshake: bool,
}

impl OurClient {
    /// A fresh client (its own pool) calling `echo` at `url`. For the handshake era the
    /// era is set up front, so no call spends a `server/discover`.
    pub fn new(url: &str, handshake: bool) -> Self {
        let client = McpClient::new().expect("build the MCP client");
        if handshake {
            client.set_era(url, brain_mcp_bind::Era::Handshake);
        }
        let binding = Binding::from_value(&json!({
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
        .expect("a valid binding");
        let call = ToolCall::new(
            "bench",
            "bench-session",
            "bench-call",
            json!({"text": "hello from the call-path benchmark"}),
        );
        Self {
            executor: McpExecutor::new(client.clone()),
            client,
            binding,
            call,
            cancel: CancellationToken::new(),
            handshake,
        }
    }

    /// One call, including (handshake era) waiting for its session DELETE to finish.
    pub async fn call(&self) {
        let result = run_call(
            &self.binding,
            self.call.clone(),
            &self.executor,
            &NoProgress,
            &self.cancel,
        )
        .await;
        assert!(!result.is_error, "the echo call failed: {:?}", result.error);
        if self.handshake {
            assert!(
                self.client.flush(FLUSH_WITHIN).await,
                "the session DELETE did not finish"
            );
        }
    }
}
