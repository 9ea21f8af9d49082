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

    /// The result for `request` (an `ElicitResult`, a `CreateMessageResult`, a
    /// `ListRootsResult`), or a refusal. The request says whose call it belongs to, so
    /// the right user is asked.
    async fn answer(&self, request: &ServerRequest<'_>) -> Result<Value, Refusal>;
}

/// A server's request for input during a call, with the call it belongs to.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ServerRequest<'a> {
    /// The tenant whose call it is.
    pub tenant: &'a str,
    /// The call's id (its events carry it).
    pub call_id: &'a str,
    /// The tool called, by the name the model sees.
    pub tool: &'a str,
    /// The request's method, such as `elicitation/create`.
    pub method: &'a str,
    /// Its parameters, as the server sent them.
    pub params: Option<&'a RawValue>,
}

impl<'a> ServerRequest<'a> {
    /// A request of `method` with `params` during `tenant`'s call `call_id` of `tool`
    /// (for tests of a responder).
    pub fn new(
        tenant: &'a str,
        call_id: &'a str,
        tool: &'a str,
        method: &'a str,
        params: Option<&'a RawValue>,
    ) -> Self {
        Self {
            tenant,
            call_id,
            tool,
            method,
            params,
        }
    }
}
