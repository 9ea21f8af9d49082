//! The host facade: what a Rust service embeds to show tenants their tools and run calls.
//!
//! A [`ToolHost`] is built from a [`HostConfig`] (its MCP bindings over HTTP) and a
//! [`ClientConfig`] (TLS roots, pool, timeouts, user agent). The application may add
//! servers it manages ([`ManagedServer`]): a stdio command the host starts, or an HTTP
//! endpoint with a token given in code. Every tool, configured or managed, runs through
//! the same pipeline (tenant allowlist, argument check, deadline, output limit, output
//! check).
//!
//! ```no_run
//! use brain_mcp_bind::host::{ManagedServer, ToolHost, ToolSpec};
//! use brain_mcp_bind::{ClientConfig, HostConfig, ToolCall, ToolEvent};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = HostConfig::load_path("host.json".as_ref())?;
//! let host = ToolHost::new(config, ClientConfig::default())?;
//! host.add_server(
//!     ManagedServer::stdio("notes", "python3")
//!         .args(["notes_server.py"])
//!         .tool(ToolSpec::new("search_notes", ["acme"])),
//! )
//! .await?;
//!
//! // What the model is shown for tenant "acme".
//! for tool in host.tools_for("acme") {
//!     println!("{}: {}", tool.name, tool.description);
//! }
//!
//! // One call: progress while it runs, then the result. Dropping `call` cancels it.
//! let mut call = host.call(
//!     "search_notes",
//!     ToolCall::new("acme", "session-1", "call-1", json!({"query": "rust"})),
//! );
//! while let Some(event) = call.next().await {
//!     match event {
//!         ToolEvent::Progress(p) => println!("progress {}", p.progress),
//!         ToolEvent::Result(r) => println!("done, error: {}", r.is_error),
//!         _ => {}
//!     }
//! }
//! host.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(())
//! # }
//! ```

mod error;
mod events;
mod listing;
mod managed;
mod reload;
mod route;
mod select;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use brain_mcp_transport::{BearerToken, BuildError, ClientConfig};
use brain_tools_core::{Binding, ErrorKind, HostConfig, ToolCall, ToolResultEvent, run_call};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use error::{HostError, HostErrorKind};
pub use events::{CallHandle, ChannelSink, DEFAULT_PROGRESS_BUFFER};
pub use managed::{
    DEFAULT_DISCOVERY_TIMEOUT, DEFAULT_POOL_SIZE, DEFAULT_STDERR_LIMIT, ManagedServer, ToolSpec,
};

use crate::Credential;
use crate::executor::{InFlight, Reach};
use crate::server::Server;
use crate::stdio::StdioServer;
use crate::target::Target;
use crate::{CredentialSource, McpClient, McpExecutor, Responder, discover};
use managed::Kind;
pub use reload::Reloaded;
use route::{Route, RouteExecutor, Routes};

/// What a model is shown about one tool.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ModelTool {
    /// The name the model calls it by.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// What a diagnostics page shows about a managed stdio server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The era its children speak (`handshake` or the 2026 version), once known.
    pub era: Option<String>,
    /// Children that ended on their own, or could not be started.
    pub crashes: u64,
    /// The newest child's recent stderr (at most the server's stderr limit).
    pub stderr: String,
}

/// Shows tenants their tools and runs calls; see the [module docs](self).
///
/// `Send + Sync` and cheap to clone: clones share the connection pool, the era cache,
/// the managed servers and their children. Children are killed when the last clone is
/// dropped; [`Self::shutdown`] ends them politely and waits for background cleanup.
#[derive(Clone, Debug)]
pub struct ToolHost {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    executor: McpExecutor,
    routes: RwLock<Routes>,
    servers: Mutex<Vec<StdioServer>>,
    progress_buffer: AtomicUsize,
    /// The variables holding the config's tokens (`token_env`): a stdio child does not
    /// inherit them, since a token goes to its own server only.
    token_vars: RwLock<Vec<String>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Background starts hold their server; stop them, so every child ends now.
        for server in lock(&self.servers).iter() {
            server.abandon();
        }
    }
}

/// Gives `client` the store the config's `token_store` names, if any (read once, when
/// the host starts: a reload does not change it).
fn use_token_store(config: &HostConfig, client: &McpClient) -> Result<(), HostError> {
    if let Some(store) = config.token_store() {
        let store = crate::token_store_from_config(store)
            .map_err(|e| HostError::new(HostErrorKind::Invalid, e.to_string()))?;
        client.set_token_store(Some(store));
    }
    Ok(())
}

impl ToolHost {
    /// A host serving the MCP bindings of `config` (other bindings are not served: their
    /// executor is the application's), over an HTTP client built from `client`.
    pub fn new(config: HostConfig, client: ClientConfig) -> Result<Self, HostError> {
        let client = McpClient::with_config(client).map_err(|e| client_error(&e))?;
        use_token_store(&config, &client)?;
        Ok(Self::with_executor(config, McpExecutor::new(client)))
    }

    /// Like [`Self::new`], with a [`Responder`] for servers' requests for user input
    /// (for applications that have a user).
    pub fn with_responder(
        config: HostConfig,
        client: ClientConfig,
        responder: Arc<dyn Responder>,
    ) -> Result<Self, HostError> {
        let client = McpClient::with_config(client).map_err(|e| client_error(&e))?;
        use_token_store(&config, &client)?;
        Ok(Self::with_executor(
            config,
            McpExecutor::with_responder(client, responder),
        ))
    }

    fn with_executor(config: HostConfig, executor: McpExecutor) -> Self {
        executor
            .client()
            .set_allow_private_auth_destinations(config.allow_private_auth_destinations());
        let mut token_vars = reload::secret_vars(&config);
        token_vars.sort_unstable();
        token_vars.dedup();
        let mut routes = Routes::default();
        // An empty host has no managed tool a config could collide with.
        let _ = routes.reload(&config);
        Self {
            inner: Arc::new(Inner {
                executor,
                routes: RwLock::new(routes),
                servers: Mutex::new(Vec::new()),
                progress_buffer: AtomicUsize::new(DEFAULT_PROGRESS_BUFFER),
                token_vars: RwLock::new(token_vars),
            }),
        }
    }

    /// The same host (and its clones) with room for `events` unread progress events per
    /// call started from now on (default [`DEFAULT_PROGRESS_BUFFER`]); past that, a slow
    /// consumer misses events, counted by [`CallHandle::dropped_progress`].
    #[must_use]
    pub fn progress_buffer(self, events: usize) -> Self {
        self.inner
            .progress_buffer
            .store(events.max(1), Ordering::Relaxed);
        self
    }

    /// Asks `source` for the credential of every HTTP call from now on, per tenant and
    /// server, in place of the bindings' own (`None` goes back to them); see
    /// docs/authorization.md. Rotation needs no restart: the source is asked each call.
    pub fn set_credentials(&self, source: Option<Arc<dyn CredentialSource>>) {
        self.inner.executor.set_credentials(source);
    }

    /// The shared MCP client (to set a server's era, or flush it yourself).
    pub fn client(&self) -> &McpClient {
        self.inner.executor.client()
    }

    /// Starts `server` (a stdio child, or an HTTP endpoint), reads its tools and serves
    /// the ones its [`ToolSpec`]s name. Returns the names the model sees. Nothing is added
    /// unless every named tool loads; the tools never change after this.
    pub async fn add_server(&self, server: ManagedServer) -> Result<Vec<String>, HostError> {
        let invalid = |m: String| HostError::new(HostErrorKind::Invalid, m);
        let listing = self.listing_credential(&server).await?;
        let (reached, endpoint, started) = match &server.kind {
            Kind::Http {
                url,
                token,
                oauth,
                headers,
            } => {
                brain_tools_core::check_headers(headers)
                    .map_err(|reason| invalid(format!("server {:?}: {reason}", server.name)))?;
                let (bearer, oauth) = match listing {
                    Some(Credential::Bearer(t)) => (Some(BearerToken::new(t.expose())), None),
                    Some(Credential::OAuth(client)) => (None, Some(client)),
                    _ => (
                        token.as_ref().map(|t| BearerToken::new(t.expose())),
                        oauth.clone(),
                    ),
                };
                let mut target = Target::new(url, bearer)
                    .map_err(|why| invalid(why.to_string()))?
                    .with_headers(headers)
                    .with_secrets(self.client().proxy_secrets());
                if let Some(oauth) = &oauth {
                    target = target.with_oauth(self.client().authorizers(), oauth);
                }
                let endpoint = select::Endpoint { url, headers };
                (Server::http(self.client(), target), Some(endpoint), None)
            }
            Kind::Stdio(config) => {
                let mut config = config.clone();
                config.max_line = max_line(&server.tools);
                config
                    .env_remove
                    .extend(read(&self.inner.token_vars).iter().map(Into::into));
                let stdio = StdioServer::new(
                    server.name.clone(),
                    config,
                    server.pool_size,
                    self.client().clone(),
                    self.inner.executor.identity().clone(),
                    server.era,
                );
                (Server::Stdio(stdio.clone()), None, Some(stdio))
            }
        };
        let identity = self.inner.executor.identity();
        let listed = discover::list_on(self.client(), &reached, identity, server.discovery_timeout)
            .await
            .map_err(|e| HostError::listing(&server.name, &e));
        let selected = listed.and_then(|listed| {
            let secrets = reached.secrets();
            let (selected, mut notes) =
                select::select(&server.name, &listed, &server.tools, endpoint, &secrets)?;
            notes.splice(0..0, listed.warnings);
            Ok((selected, notes))
        });
        let (selected, notes) = match selected {
            Ok(selected) => selected,
            Err(e) => {
                // Its background starts must not outlive a server never added.
                if let Some(stdio) = &started {
                    stdio.abandon();
                }
                return Err(e);
            }
        };
        // Managed servers' slots are their own, apart from configured bindings' servers.
        let limit = server.max_in_flight.map(|calls| InFlight {
            key: format!("managed:{}", server.name),
            calls,
        });
        let selected: Vec<_> = selected
            .into_iter()
            .map(|s| {
                let reach = match &server.kind {
                    // Made per call: the tenant's credential may differ from the listing's.
                    Kind::Http { token, oauth, .. } => Reach::PerCall {
                        token: token.clone(),
                        oauth: oauth.clone(),
                    },
                    Kind::Stdio(_) => Reach::Kept {
                        server: reached.clone(),
                        tool: s.remote,
                    },
                };
                (s.binding, reach)
            })
            .collect();
        let mut routes = self
            .inner
            .routes
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((taken, _)) = selected
            .iter()
            .find(|(b, _)| routes.by_name.contains_key(b.name()))
        {
            if let Some(stdio) = started {
                stdio.abandon();
            }
            return Err(invalid(format!(
                "a tool named {:?} is already served",
                taken.name()
            )));
        }
        if let Some(stdio) = started {
            lock(&self.inner.servers).push(stdio);
        }
        // Told once the tools are served: a server refused adds nothing to note.
        for note in &notes {
            crate::observe::server_note(&server.name, note);
        }
        let names = selected.iter().map(|(b, _)| b.name().to_owned()).collect();
        for (binding, reach) in selected {
            routes.order.push(binding.name().to_owned());
            routes.by_name.insert(
                binding.name().to_owned(),
                Arc::new(Route {
                    binding,
                    reach,
                    limit: limit.clone(),
                    configured: false,
                    server: Some(server.name.clone()),
                }),
            );
        }
        Ok(names)
    }

    /// Serves the MCP bindings of `config` from now on, in place of the configured ones
    /// (managed servers' tools stay), in one step: calls in flight finish with the binding
    /// they started with, new calls and [`Self::tools_for`] see the new set at once, and
    /// the connection pool, era cache and tokens survive for servers that stay. Says
    /// what changed. A config naming a managed server's tool is refused
    /// ([`HostErrorKind::Invalid`]) and nothing changes.
    pub fn reload(&self, config: &HostConfig) -> Result<Reloaded, HostError> {
        let report = self
            .inner
            .routes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .reload(config)
            .map_err(|refused| HostError::new(HostErrorKind::Invalid, refused.to_string()))?;
        self.client()
            .set_allow_private_auth_destinations(config.allow_private_auth_destinations());
        let mut vars = self
            .inner
            .token_vars
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        vars.extend(reload::secret_vars(config));
        vars.sort_unstable();
        vars.dedup();
        Ok(report)
    }

    /// What the model is shown for `tenant`: the tools it may use, in the order they
    /// were configured and added.
    pub fn tools_for(&self, tenant: &str) -> Vec<ModelTool> {
        let routes = self
            .inner
            .routes
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        routes
            .order
            .iter()
            .filter_map(|name| routes.by_name.get(name))
            .filter(|r| r.binding.allows_tenant(tenant))
            .map(|r| ModelTool {
                name: r.binding.name().to_owned(),
                description: r.binding.description().to_owned(),
                input_schema: r.binding.input_schema().clone(),
            })
            .collect()
    }

    /// The binding of tool `name`, if the host serves one.
    pub fn binding(&self, name: &str) -> Option<Arc<Binding>> {
        let routes = self
            .inner
            .routes
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        routes.by_name.get(name).map(|r| r.binding.clone())
    }

    /// Starts `call` of tool `name` and returns its handle at once. A tool the host does
    /// not serve is refused like a tool the tenant may not use (`tenant_not_allowed`),
    /// so a tenant learns nothing about other tenants' tools.
    pub fn call(&self, name: &str, call: ToolCall) -> CallHandle {
        self.call_with(name, call, CancellationToken::new())
    }

    /// [`Self::call`], cancelled also when `cancel` (or a parent of it) fires. The call
    /// only listens to `cancel`: dropping or cancelling its handle ends this call and
    /// never fires `cancel`, so one token may watch a whole session.
    ///
    /// Outside a Tokio runtime the call cannot start: its handle yields a `cancelled`
    /// result saying so, at once.
    pub fn call_with(&self, name: &str, call: ToolCall, cancel: CancellationToken) -> CallHandle {
        let cancel = cancel.child_token();
        let route = self
            .inner
            .routes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .by_name
            .get(name)
            .cloned();
        let (sink, progress) = ChannelSink::new(self.inner.progress_buffer.load(Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        let handle = CallHandle::new(call.call_id.clone(), &sink, progress, rx, cancel.clone());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            drop(sink);
            let _ = tx.send(ToolResultEvent::failure(
                &call.call_id,
                ErrorKind::Cancelled,
                "ToolHost::call needs a Tokio runtime: call it from inside one",
                false,
            ));
            return handle;
        };
        let inner = self.inner.clone();
        let name = name.to_owned();
        runtime.spawn(async move {
            let result = match route {
                Some(route) => {
                    let executor = RouteExecutor {
                        executor: &inner.executor,
                        route: &route,
                    };
                    run_call(&route.binding, call, &executor, &sink, &cancel).await
                }
                None => ToolResultEvent::failure(
                    &call.call_id,
                    ErrorKind::TenantNotAllowed,
                    format!("tenant {:?} may not use tool {name:?}", call.tenant),
                    false,
                ),
            };
            // Closing the progress channel first tells the handle the result is next.
            drop(sink);
            let _ = tx.send(result);
        });
        handle
    }

    /// What a managed stdio server's diagnostics show, by its name.
    pub fn server_status(&self, name: &str) -> Option<ServerStatus> {
        let servers = lock(&self.inner.servers);
        let server = servers.iter().find(|s| s.name() == name)?;
        let status = server.status();
        Some(ServerStatus {
            era: status.era.map(|e| e.describe().to_owned()),
            crashes: status.crashes,
            stderr: status.stderr,
        })
    }

    /// Ends the managed children politely (stdin closed, a grace, then kill) and waits,
    /// at most `within`, for background cleanup: session DELETEs, cancel notices,
    /// per-call children. Returns whether everything finished. Calls still running keep
    /// their child until they end; new calls of stdio tools fail to start.
    pub async fn shutdown(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let servers: Vec<StdioServer> = lock(&self.inner.servers).clone();
        // Every server at once, so each gets its children's grace within `within`.
        let mut stopping = tokio::task::JoinSet::new();
        for server in servers {
            stopping.spawn(async move { server.stop(deadline).await });
        }
        let mut done = true;
        while let Some(stopped) = stopping.join_next().await {
            done &= stopped.unwrap_or(false);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        self.client().flush(left).await && done
    }
}

/// The longest line a stdio child may write: room for the largest call's read budget
/// and for a large tool list.
fn max_line(tools: &[ToolSpec]) -> usize {
    let largest = tools
        .iter()
        .map(|t| {
            t.max_output_bytes
                .unwrap_or(select::DEFAULT_MAX_OUTPUT_BYTES)
        })
        .max()
        .unwrap_or(select::DEFAULT_MAX_OUTPUT_BYTES);
    crate::executor::read_budget(largest).max(crate::driver::CONTROL_BUDGET)
}

fn client_error(e: &BuildError) -> HostError {
    HostError::new(
        HostErrorKind::Client,
        format!("the HTTP client could not be built: {e}"),
    )
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(PoisonError::into_inner)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
