//! A real rmcp server for the project's tests: `rmcp-peer-server PORT` serves
//! streamable HTTP on `http://127.0.0.1:PORT/mcp` (sessions, SSE replies), and
//! `rmcp-peer-server stdio` serves one client on stdin/stdout.
//!
//! Tools: `echo` (text), `add` (structured content with an output schema),
//! `progress` (sends `steps` progress notifications, then text) and `fail`
//! (an `isError` result).

use std::time::Duration;

use rmcp::{
    Json, Peer, RoleServer, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject,
        ServerCapabilities, ServerConfig,
    },
    schemars, tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// Left operand.
    a: i64,
    /// Right operand.
    b: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Sum {
    /// a + b
    sum: i64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ProgressArgs {
    /// How many progress notifications to send (at most 100).
    steps: u32,
}

#[derive(Debug, Clone)]
struct PeerServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl PeerServer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Returns the given text")]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Adds two integers; the result is structured")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum {
            sum: a.saturating_add(b),
        })
    }

    #[tool(description = "Reports progress `steps` times, then answers with text")]
    async fn progress(
        &self,
        Parameters(ProgressArgs { steps }): Parameters<ProgressArgs>,
        meta: RequestMetaObject,
        client: Peer<RoleServer>,
    ) -> String {
        let steps = steps.min(100);
        if let Some(token) = meta.get_progress_token() {
            for i in 1..=steps {
                let _ = client
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(i))
                            .with_total(f64::from(steps))
                            .with_message(format!("step {i} of {steps}")),
                    )
                    .await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        format!("done after {steps} steps")
    }

    #[tool(description = "Always fails with an isError result")]
    async fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("this tool always fails")])
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PeerServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .ok_or("usage: rmcp-peer-server PORT|stdio")?;
    if arg == "stdio" {
        let running = rmcp::serve_server(PeerServer::new(), rmcp::transport::stdio()).await?;
        running.waiting().await?;
        return Ok(());
    }
    let port: u16 = arg
        .parse()
        .map_err(|e| format!("PORT is not a port number: {e}"))?;
    let service: StreamableHttpService<PeerServer, LocalSessionManager> = StreamableHttpService::new(
        || Ok(PeerServer::new()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("rmcp-peer-server listening on http://127.0.0.1:{port}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
