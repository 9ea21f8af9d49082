//! Taking a new host config at run time: the configured routes are replaced in one step
//! (a call holds the route it started with, so calls in flight finish with their old
//! binding), managed servers' routes stay, and the connection pool, era cache, tokens and
//! children are the client's and survive.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use brain_tools_core::HostConfig;

use super::error::{HostError, HostErrorKind};
use super::route::{Route, Routes};
use super::{ToolHost, lock};

/// How long a removed stdio server's children get to end politely.
const REMOVED_GRACE: Duration = Duration::from_secs(2);

impl ToolHost {
    /// Stops serving managed server `name`'s tools at once (new calls no longer reach
    /// them, and [`Self::tools_for`] drops them); its children end after the calls in
    /// flight on them let go (a stdio server's ready children at once). Returns the
    /// tools removed; an unknown name is [`HostErrorKind::Invalid`].
    pub fn remove_server(&self, name: &str) -> Result<Vec<String>, HostError> {
        let removed: Vec<Arc<Route>> = {
            let mut routes = self
                .inner
                .routes
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let names: Vec<String> = routes
                .order
                .iter()
                .filter(|n| routes.by_name.get(*n).and_then(|r| r.server.as_deref()) == Some(name))
                .cloned()
                .collect();
            routes.order.retain(|n| !names.contains(n));
            names
                .iter()
                .filter_map(|n| routes.by_name.remove(n))
                .collect()
        };
        if removed.is_empty() {
            return Err(HostError::new(
                HostErrorKind::Invalid,
                format!("no managed server named {name:?} is served"),
            ));
        }
        let stdio = {
            let mut servers = lock(&self.inner.servers);
            servers
                .iter()
                .position(|s| s.name() == name)
                .map(|i| servers.remove(i))
        };
        let names = removed
            .iter()
            .map(|r| r.binding.name().to_owned())
            .collect();
        if let Some(stdio) = stdio {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        // The calls in flight hold the routes (and the server) they started on.
                        while removed.iter().any(|r| Arc::strong_count(r) > 1) {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        drop(removed);
                        stdio
                            .stop(tokio::time::Instant::now() + REMOVED_GRACE)
                            .await;
                    });
                }
                Err(_) => stdio.abandon(),
            }
        }
        Ok(names)
    }
}

/// What a reload changed, by the names the model sees.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// Tools served now and not before.
    pub added: Vec<String>,
    /// Tools no longer served.
    pub removed: Vec<String>,
    /// Tools served before and now whose binding differs.
    pub changed: Vec<String>,
}

/// A reload refused: the config names a tool a managed server serves. `Display` says so.
#[derive(Debug, thiserror::Error)]
#[error("the config names {0:?}, a tool a managed server serves; nothing was changed")]
pub(super) struct ManagedName(String);

impl Routes {
    /// Serves `config`'s MCP bindings in place of the configured ones; managed servers'
    /// tools stay, after the configured ones. Refused, with nothing changed, when a name
    /// of `config` is a managed server's tool.
    pub(super) fn reload(&mut self, config: &HostConfig) -> Result<Reloaded, ManagedName> {
        let fresh: Vec<_> = config
            .tools()
            .iter()
            .filter(|b| b.is_mcp())
            .cloned()
            .collect();
        let managed =
            |routes: &Self, name: &str| routes.by_name.get(name).is_some_and(|r| !r.configured);
        if let Some(taken) = fresh.iter().find(|b| managed(self, b.name())) {
            return Err(ManagedName(taken.name().to_owned()));
        }
        let mut report = Reloaded::default();
        for name in &self.order {
            let configured = self.by_name.get(name).is_some_and(|r| r.configured);
            if configured && !fresh.iter().any(|b| b.name() == name) {
                report.removed.push(name.clone());
            }
        }
        for binding in &fresh {
            match self.by_name.get(binding.name()) {
                Some(old) if old.binding.to_value() != binding.to_value() => {
                    report.changed.push(binding.name().to_owned());
                }
                Some(_) => {}
                None => report.added.push(binding.name().to_owned()),
            }
        }
        let kept: Vec<String> = self
            .order
            .iter()
            .filter(|name| managed(self, name))
            .cloned()
            .collect();
        self.by_name.retain(|_, r| !r.configured);
        self.order = fresh
            .iter()
            .map(|b| b.name().to_owned())
            .chain(kept)
            .collect();
        for binding in fresh {
            let name = binding.name().to_owned();
            self.by_name
                .insert(name, Arc::new(Route::configured(binding)));
        }
        Ok(report)
    }
}

/// Every variable holding a secret of `config`'s bindings (`token_env`, an OAuth client
/// secret or key): managed children never inherit one.
pub(super) fn secret_vars(config: &HostConfig) -> Vec<String> {
    config
        .tools()
        .iter()
        .filter_map(|b| b.secret_env().map(str::to_owned))
        .collect()
}
