//! A server a call or a listing goes to, whatever kind: an HTTP endpoint, or a managed
//! stdio server. Each gives the driver what it needs (an era, a channel); the driver does
//! the rest the same way for both.

use std::sync::Arc;

use brain_mcp_proto::client::{Era, Framing, Identity, Outcome, ServerKind, Sessions};
use brain_mcp_proto::mcp::Tool;
use brain_mcp_transport::Secrets;
use tokio::time::Instant;

use crate::breaker::BreakerOpen;
use crate::client::McpClient;
use crate::driver::{self, Channel, DriverError};
use crate::link::{HttpLink, Link};
use crate::servers::Ticket;
use crate::stdio::StdioServer;
use crate::target::Target;

/// A server.
#[derive(Clone, Debug)]
pub(crate) enum Server {
    /// An HTTP endpoint.
    Http(HttpLink),
    /// A managed stdio server.
    Stdio(StdioServer),
}

impl Server {
    /// The HTTP server at `target`.
    pub(crate) fn http(client: &McpClient, target: Target) -> Self {
        Self::Http(HttpLink::new(client.clone(), Arc::new(target)))
    }

    /// The era cache key.
    pub(crate) fn key(&self) -> &str {
        match self {
            Self::Http(link) => &link.target().key,
            Self::Stdio(server) => server.key(),
        }
    }

    /// How the server is reached, for the core's rules on its state.
    pub(crate) fn kind(&self) -> ServerKind {
        match self {
            Self::Http(_) => ServerKind::Http,
            Self::Stdio(_) => ServerKind::Process,
        }
    }

    /// Lets an exchange with the server go, as its state in the core says (an HTTP
    /// server's breaker may refuse it; a child's exchanges always go); report how it went
    /// on the ticket.
    pub(crate) fn admit<'a>(&'a self, client: &'a McpClient) -> Result<Ticket<'a>, BreakerOpen> {
        client
            .servers()
            .admit(self.key(), self.kind(), self.origin())
    }

    /// What logs and messages call the server: an origin, never a path or query.
    pub(crate) fn origin(&self) -> &str {
        match self {
            Self::Http(link) => link.target().origin(),
            Self::Stdio(server) => server.origin(),
        }
    }

    /// Every secret to remove from what the server says.
    pub(crate) fn secrets(&self) -> Secrets {
        match self {
            Self::Http(link) => link.target().secrets_now(),
            Self::Stdio(_) => Secrets::none(),
        }
    }

    /// The server's era: cached, or learned with the core's probe (one at a time per
    /// server, retried within `deadline` as the core allows).
    pub(crate) async fn era(
        &self,
        client: &McpClient,
        identity: &Identity,
        deadline: Instant,
    ) -> Result<Era, DriverError> {
        let probe_once = || async move {
            match self {
                Self::Http(link) => {
                    driver::probe(client, &Link::Http(link.clone()), identity, None).await
                }
                Self::Stdio(server) => server.probe_once(deadline).await,
            }
        };
        let (key, origin) = (self.key(), self.origin());
        driver::era_of(client, key, self.kind(), origin, deadline, probe_once).await
    }

    /// Where an exchange of `era` runs: for the handshake era a session of its own (a
    /// fresh one over HTTP; a child from the pool over stdio), ended when the channel
    /// is dropped; for the 2026 era the server itself. `bounded`: a child's start fails
    /// at `deadline` (a listing) rather than at the caller's own (a call).
    pub(crate) async fn channel(
        &self,
        client: &McpClient,
        identity: &Identity,
        era: Era,
        deadline: Instant,
        bounded: bool,
    ) -> Result<Channel, DriverError> {
        let framing = Framing::for_era(era);
        match self {
            // Boxed, as below: a session's state stays out of the futures of calls that
            // open none.
            Self::Http(link) if framing.sessions(ServerKind::Http) == Sessions::PerExchange => {
                Box::pin(driver::open_session(
                    client,
                    Link::Http(link.clone()),
                    identity,
                ))
                .await
            }
            Self::Http(link) => Ok(Channel::sessionless(
                client,
                Link::Http(link.clone()),
                framing,
            )),
            Self::Stdio(server) => Box::pin(server.channel(framing, deadline, bounded)).await,
        }
    }

    /// Every tool the server lists, page by page into `page`, and its era: the era
    /// probe, a channel (bounded by `deadline`) and every page of `tools/list`.
    pub(crate) async fn list(
        &self,
        client: &McpClient,
        identity: &Identity,
        deadline: Instant,
        mut page: impl FnMut(&Framing, Vec<Tool>),
    ) -> Result<Era, DriverError> {
        // Counted like a call's outcome, though never refused by the breaker: a listing
        // is how an operator finds out.
        let ticket = client
            .servers()
            .ticket(self.key(), self.kind(), self.origin());
        let listed = async {
            let era = self.era(client, identity, deadline).await?;
            let channel = self.channel(client, identity, era, deadline, true).await?;
            let framing = channel.framing.clone();
            driver::list_tools(client, &channel, identity, |tools| {
                page(&framing, tools);
            })
            .await?;
            Ok(era)
        }
        .await;
        ticket.record(
            listed
                .as_ref()
                .err()
                .map_or(Outcome::Worked, DriverError::outcome),
        );
        listed
    }
}
