//! What the host serves: each tool the model may call, the binding it runs with, how a
//! call finds its server, and a managed server's limit of calls in flight, with the
//! executor that runs one route's calls.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use brain_tools_core::{Binding, ExecContext, ToolExecutor, ToolFailure, ToolOutput};

use crate::McpExecutor;
use crate::executor::{InFlight, Reach};

#[derive(Debug, Default)]
pub(super) struct Routes {
    pub(super) order: Vec<String>,
    pub(super) by_name: HashMap<String, Arc<Route>>,
}

#[derive(Debug)]
pub(super) struct Route {
    pub(super) binding: Arc<Binding>,
    /// How a call finds its server.
    pub(super) reach: Reach,
    /// A managed server's limit of calls in flight.
    pub(super) limit: Option<InFlight>,
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
            reach: Reach::BINDING,
            limit: None,
            configured: true,
            server: None,
        }
    }
}

/// Runs one route's calls through the executor's one entry.
pub(super) struct RouteExecutor<'a> {
    pub(super) executor: &'a McpExecutor,
    pub(super) route: &'a Route,
}

#[async_trait]
impl ToolExecutor for RouteExecutor<'_> {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        let route = self.route;
        self.executor
            .call(ctx, &route.reach, route.limit.as_ref())
            .await
    }
}
