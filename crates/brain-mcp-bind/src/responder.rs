//! Answers to a server's requests for user input, for applications that have a user.
//!
//! Brain's own bindings have no user: a request for input (an elicitation, an LLM sample,
//! the client's roots) is refused and the call fails as `user_input_required`. An
//! application that can ask someone plugs a [`Responder`] into its executor
//! ([`McpExecutor::with_responder`](crate::McpExecutor::with_responder)); the client then
//! declares the capability and hands every such request to it, in either era.

use async_trait::async_trait;
use brain_mcp_proto::mcp::ClientCapabilities;
use serde_json::Value;
use serde_json::value::RawValue;

pub use brain_mcp_proto::client::Refusal;

/// Answers requests for user input.
#[async_trait]
pub trait Responder: Send + Sync {
    /// The capabilities the client declares (by default: form elicitation).
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default().with_elicitation()
    }

    /// The result for request `method` with `params` (an `ElicitResult`, a
    /// `CreateMessageResult`, a `ListRootsResult`), or a refusal.
    async fn answer(&self, method: &str, params: Option<&RawValue>) -> Result<Value, Refusal>;
}
