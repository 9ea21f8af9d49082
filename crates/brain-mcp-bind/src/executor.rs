//! The executor behind MCP bindings: one call, on whatever server, through the driver.

use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use brain_mcp_proto::client::{CallRequest, Identity, Outcome};
use brain_mcp_proto::meta::CallScope;
use brain_mcp_transport::BearerToken;
use brain_tools_core::{
    EndpointUrl, ErrorKind, ExecContext, Secret, TaskSupport, ToolExecutor, ToolFailure, ToolOutput,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::auth::{Credential, CredentialSource, OAuthClient};
use crate::client::McpClient;
use crate::driver::{self, Asker, Calling, Cause, DriverError, Step};
use crate::responder::Responder;
use crate::server::Server;
use crate::target::Target;
use crate::{convert, observe, redact};

/// Extra room in a call's read budget over twice `max_output_bytes`, for the JSON-RPC
/// envelope; the exact limit is applied to the converted output. Messages before the
/// result (progress) spend none of it: each is capped on its own.
pub const ENVELOPE_ALLOWANCE: usize = 64 * 1024;

/// Runs MCP bindings. Share one per process: it holds the connection pool and era cache.
#[derive(Clone)]
pub struct McpExecutor {
    client: McpClient,
    responder: Option<Arc<dyn Responder>>,
    identity: Identity,
    /// The embedder's credentials per tenant and server, shared by clones.
    credentials: Arc<RwLock<Option<Arc<dyn CredentialSource>>>>,
}

impl std::fmt::Debug for McpExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpExecutor")
            .field("client", &self.client)
            .field("responder", &self.responder.is_some())
            .finish()
    }
}

impl McpExecutor {
    /// An executor using `client`, refusing every request for user input (Brain's
    /// bindings have no user to ask).
    pub fn new(client: McpClient) -> Self {
        let identity = client.identity().clone();
        Self {
            client,
            responder: None,
            identity,
            credentials: Arc::default(),
        }
    }

    /// An executor whose calls declare `responder`'s capabilities and hand it every
    /// request for user input, in either era (an elicitation on a handshake-era stream, or
    /// a 2026 `input_required` round, retried with its answers). For applications that
    /// have a user; off by default.
    pub fn with_responder(client: McpClient, responder: Arc<dyn Responder>) -> Self {
        let identity = client
            .identity()
            .clone()
            .with_capabilities(responder.capabilities());
        Self {
            client,
            responder: Some(responder),
            identity,
            credentials: Arc::default(),
        }
    }

    /// Asks `source` for the credential of every call from now on (this executor and its
    /// clones), in place of the binding's own; `None` goes back to the bindings'.
    pub fn set_credentials(&self, source: Option<Arc<dyn CredentialSource>>) {
        *self
            .credentials
            .write()
            .unwrap_or_else(PoisonError::into_inner) = source;
    }

    /// The credential of a call: the source's, when one is set.
    pub(crate) async fn credential(&self, tenant: &str, url: &str) -> Credential {
        let source = self
            .credentials
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match source {
            Some(source) => source.credential(tenant, url).await,
            None => Credential::FromBinding,
        }
    }

    /// The shared client (for [`McpClient::flush`] before exit).
    pub fn client(&self) -> &McpClient {
        &self.client
    }

    /// Who the calls say they are: `clientInfo` and the declared capabilities.
    pub(crate) fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Runs one call on the server `reach` finds for it, holding a slot of `limit` (a
    /// managed server's) or else of the binding's own `max_in_flight`: the one way into a
    /// call for configured bindings and managed servers of either kind.
    pub(crate) async fn call(
        &self,
        mut ctx: ExecContext<'_>,
        reach: &Reach,
        limit: Option<&InFlight>,
    ) -> Result<ToolOutput, ToolFailure> {
        match reach {
            Reach::PerCall { token, oauth } => {
                if token.is_some() {
                    ctx.token = token.clone();
                }
                let (server, tool) = self.per_call(&ctx, oauth.as_ref()).await?;
                self.run(&server, tool, &ctx, limit).await
            }
            Reach::Kept { server, tool } => self.run(server, tool, &ctx, limit).await,
        }
    }

    /// Runs the call of `tool` on `server`; what it hands back has every secret of the
    /// server removed.
    async fn run(
        &self,
        server: &Server,
        tool: &str,
        ctx: &ExecContext<'_>,
        limit: Option<&InFlight>,
    ) -> Result<ToolOutput, ToolFailure> {
        observe::call_target(server.origin(), tool);
        // As the server's state says: an HTTP server that calls could not reach lately
        // fails at once.
        let ticket = server
            .admit(&self.client)
            .map_err(|open| ToolFailure::before_send(ErrorKind::ConnectFailed, open.to_string()))?;
        // A limited server's slot, waited for inside the call's deadline.
        let limit = limit
            .map(|l| (l.key.as_str(), l.calls))
            .or_else(|| Some((server.key(), ctx.binding.max_in_flight()?)));
        let _slot = match limit {
            Some((key, n)) => self.client.limits().slot(key, n).await,
            None => None,
        };
        let result = self.run_on(server, tool, ctx).await;
        ticket.record(
            result
                .as_ref()
                .err()
                .map_or(Outcome::Worked, DriverError::outcome),
        );
        // Taken after the call: an OAuth token got during it is a secret too.
        let secrets = &server.secrets();
        match result {
            Ok(output) => Ok(redact::output(secrets, output)),
            Err(e) => Err(e.to_failure(secrets)),
        }
    }

    async fn run_on(
        &self,
        server: &Server,
        tool: &str,
        ctx: &ExecContext<'_>,
    ) -> Result<ToolOutput, DriverError> {
        let (client, identity, deadline) = (&self.client, &self.identity, ctx.deadline);
        let era = server.era(client, identity, deadline).await?;
        let mut channel = server
            .channel(client, identity, era, deadline, false)
            .await?;
        let scope = scope(ctx);
        let arguments = ctx.call.arguments.object().unwrap_or(&NO_ARGUMENTS);
        let mut request = CallRequest::new(tool, arguments, &ctx.call.call_id);
        // The model's own text, when the host passed it, and when it is the object the
        // checks parsed (the exact digits travel).
        request.arguments_text = ctx
            .call
            .arguments
            .text()
            .filter(|_| ctx.call.arguments.object().is_some());
        request.raw_meta = &scope;
        request.input_schema = Some(ctx.binding.input_schema());
        // A tool that runs only as a task is asked to, kept by the server no longer than
        // the call may wait for it.
        if ctx
            .binding
            .mcp()
            .is_some_and(|mcp| mcp.task_support() == TaskSupport::Required)
        {
            let left = ctx
                .deadline
                .saturating_duration_since(tokio::time::Instant::now());
            request.task = Some(u64::try_from(left.as_millis()).ok());
        }
        let calling = Calling {
            client,
            identity,
            asker: Asker::new(self.responder.as_deref(), ctx),
            request: &request,
            ctx,
            budget: read_budget(ctx.binding.max_output_bytes()),
        };
        // Boxed: the call loop's state (most of a call's future) is then moved once, not
        // at every level that awaits this one.
        let result = Box::pin(driver::call(&mut channel, &calling)).await?;
        convert::convert(result).map_err(|e| DriverError::new(Step::Call, Cause::Content(e)))
    }
}

#[async_trait]
impl ToolExecutor for McpExecutor {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        self.call(ctx, &Reach::BINDING, None).await
    }
}

/// How a call finds its server.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per call, borrowed or moved once: a box would only add an allocation
pub(crate) enum Reach {
    /// An HTTP server made for each call from the binding (its URL, headers, tool) and
    /// the tenant's credential; `token` or `oauth`, given in code for a managed server,
    /// stand for the binding's own.
    PerCall {
        token: Option<Secret>,
        oauth: Option<OAuthClient>,
    },
    /// A server kept for as long as the tool is served (a managed stdio server), and the
    /// tool's name on it.
    Kept { server: Server, tool: String },
}

impl Reach {
    /// A configured binding's: its own URL and credential.
    pub(crate) const BINDING: Self = Self::PerCall {
        token: None,
        oauth: None,
    };
}

/// A limit of calls in flight shared by one server's tools: its slots' key and size.
#[derive(Clone, Debug)]
pub(crate) struct InFlight {
    pub(crate) key: String,
    pub(crate) calls: u32,
}

impl McpExecutor {
    /// The HTTP server of a call and the tool's name on it, with `oauth` (a managed
    /// server's, given in code) as the binding's own credential: used when the host's
    /// credential source, if any, answers `FromBinding`.
    async fn per_call<'c>(
        &self,
        ctx: &ExecContext<'c>,
        oauth: Option<&OAuthClient>,
    ) -> Result<(Server, &'c str), ToolFailure> {
        let binding = ctx.binding;
        let Some(mcp) = binding.mcp() else {
            return Err(ToolFailure::before_send(
                ErrorKind::ConnectFailed,
                format!(
                    "binding {:?} is not an MCP binding (url and mcp_tool are required)",
                    binding.name()
                ),
            ));
        };
        let (bearer, oauth) = match self.credential(&ctx.call.tenant, mcp.url().as_str()).await {
            Credential::FromBinding => (
                ctx.token.as_ref().map(|t| BearerToken::new(t.expose())),
                oauth.cloned().or_else(|| {
                    binding.oauth().map(|config| {
                        let client = OAuthClient::from_config(config);
                        match self.client.token_store() {
                            Some(store) => client.with_token_store(store),
                            None => client,
                        }
                    })
                }),
            ),
            Credential::Bearer(token) => (Some(BearerToken::new(token.expose())), None),
            Credential::OAuth(client) => (None, Some(client)),
            _ => {
                return Err(ToolFailure::before_send(
                    ErrorKind::AuthorizationFailed,
                    format!(
                        "tenant {:?} has no credentials for {}; nothing was sent",
                        ctx.call.tenant,
                        mcp.url().origin()
                    ),
                ));
            }
        };
        let server = self.server(mcp.url(), bearer, oauth, binding.headers())?;
        Ok((server, mcp.tool()))
    }

    /// The HTTP server a call goes to, with its credential. Not async, so nothing it
    /// builds on the way (the OAuth client) is held in the call's future.
    fn server(
        &self,
        url: &EndpointUrl,
        bearer: Option<BearerToken>,
        oauth: Option<OAuthClient>,
        headers: &[(String, String)],
    ) -> Result<Server, ToolFailure> {
        let mut target = Target::checked(url, bearer)
            .map_err(|why| ToolFailure::before_send(ErrorKind::ConnectFailed, why.to_string()))?
            .with_headers(headers)
            .with_secrets(self.client.proxy_secrets());
        if let Some(oauth) = oauth {
            target = target.with_oauth(self.client.authorizers(), &oauth);
        }
        Ok(Server::http(&self.client, target))
    }
}

/// The `_meta` Brain adds to a `tools/call`: who the call belongs to, and its trace.
fn scope(ctx: &ExecContext<'_>) -> Vec<(&'static str, Box<RawValue>)> {
    let call = ctx.call;
    let mut scope = CallScope::new(&call.tenant, &call.session_id, &call.call_id);
    scope.trace = call
        .trace
        .as_ref()
        .map(|t| (t.traceparent(), t.tracestate()));
    scope.to_meta()
}

/// Bytes a call may read: room for the result twice (a server sends structured content
/// and, as MCP asks, its JSON again as text; `max_output_bytes` counts it once) plus the
/// JSON-RPC envelope.
pub(crate) fn read_budget(max_output_bytes: usize) -> usize {
    max_output_bytes
        .saturating_mul(2)
        .saturating_add(ENVELOPE_ALLOWANCE)
}

/// Arguments of a call whose `arguments` are not an object (the input schema requires an
/// object, so this is only reached by executors run outside the pipeline).
static NO_ARGUMENTS: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
