//! What the host serves: each tool the model may call, the binding it runs with, and
//! how it is reached (an HTTP binding, or a tool of a managed stdio server), with the
//! executor that runs one route's calls.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use brain_tools_core::{Binding, ExecContext, Secret, ToolExecutor, ToolFailure, ToolOutput};

use crate::OAuthClient;

use crate::McpExecutor;
use crate::server::Server;

#[derive(Debug, Default)]
pub(super) struct Routes {
    pub(super) order: Vec<String>,
    pub(super) by_name: HashMap<String, Arc<Route>>,
}

#[derive(Debug)]
pub(super) struct Route {
    pub(super) binding: Arc<Binding>,
    pub(super) via: Via,
    /// A managed server's limit of calls in flight: its slots' key and size.
    pub(super) limit: Option<(String, u32)>,
    /// From the host config (replaced by a reload), not from a managed server.
    pub(super) configured: bool,
    /// The managed server it belongs to, by name.
    pub(super) server: Option<String>,
}

impl Route {
    /// The route of a configured MCP binding.
    pub(super) fn configured(binding: Arc<Binding>) -> Self {
        Self {
            binding,
            via: Via::Http {
                token: None,
                oauth: None,
            },
            limit: None,
            configured: true,
            server: None,
        }
    }
}

#[derive(Debug)]
pub(super) enum Via {
    /// An MCP binding over HTTP; `token` or `oauth` given in code replace the binding's
    /// own credential.
    Http {
        token: Option<Secret>,
        oauth: Option<OAuthClient>,
    },
    /// A tool of a managed stdio server.
    Stdio { server: Server, tool: String },
}

/// Runs one route's calls: HTTP bindings with the executor (a token given in code
/// replaces `token_env`), stdio tools on their server.
pub(super) struct RouteExecutor<'a> {
    pub(super) executor: &'a McpExecutor,
    pub(super) via: &'a Via,
    pub(super) limit: Option<&'a (String, u32)>,
}

#[async_trait]
impl ToolExecutor for RouteExecutor<'_> {
    async fn execute(&self, mut ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        // A managed server's slot, waited for inside the call's deadline.
        let _slot = match self.limit {
            Some((key, n)) => Some(self.executor.client().limits().slot(key, *n).await),
            None => None,
        };
        match self.via {
            Via::Http { token, oauth } => {
                if token.is_some() {
                    ctx.token = token.clone();
                }
                self.executor.execute_with(ctx, oauth.as_ref()).await
            }
            Via::Stdio { server, tool } => self.executor.run(server, tool, &ctx).await,
        }
    }
}
