//! The destination rule of peer-named URLs, applied to the addresses actually connected
//! to ([`brain_mcp_proto::auth::reach`] decides; this module resolves and connects).
//!
//! A fetch that carries [`Destinations`] and goes directly (no proxy) is sent like this:
//! 1. the host is resolved with the client's resolver (`localhost` names are loopback,
//!    an IP literal is itself), and every address the rule refuses is dropped; when none
//!    is left the fetch fails with an error that answers `is_destination` and nothing is sent;
//! 2. the request goes over a connection opened for it alone (HTTP/1.1 or h2, as ALPN
//!    picks), to exactly the addresses kept, and closed after the answer.
//!
//! The fresh connection is the point: the client's pool is keyed by scheme and host, not by
//! address or rule, so a pooled connection may have been opened to addresses this rule
//! refuses (by an MCP request, by a fetch for a loopback server, or before a name's
//! answer changed). A checked fetch therefore never takes a pooled connection and never
//! leaves one behind; authorization fetches are few, so the extra handshake costs little.
//! Resolving once and connecting to those very addresses also leaves no gap for a name
//! whose answer changes between the check and the connect.
//!
//! Through a proxy the proxy resolves the name, which this machine cannot see: a host
//! whose text already says its class (an IP literal, a `localhost` name) is checked and
//! refused before the proxy is asked; any other name goes through the proxy as before.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use brain_mcp_proto::auth::reach::{self, AddrClass, Destinations, Refused};
use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;

use crate::client::{HttpClient, Place};
use crate::error::{Delivery, ErrorKind, TransportError};
use crate::resolve::{Addrs, Resolver};

/// The host of `url` without IPv6 brackets.
fn bare_host(url: &Uri) -> Option<&str> {
    let host = url.host()?;
    Some(
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host),
    )
}

/// The addresses `host` resolves to with `resolver`: itself for an IP literal.
async fn lookup(resolver: &Resolver, host: &str) -> io::Result<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, 0)]);
    }
    let name: Name = host
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not a host name"))?;
    let mut resolver = resolver.clone();
    let found = tower_service::Service::call(&mut resolver, name).await?;
    Ok(found.collect())
}

/// The addresses of `addrs` the rule allows, or the refusal of the first one when it
/// allows none.
fn allowed(
    destinations: &Destinations,
    addrs: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, Option<Refused>> {
    let mut first = None;
    let kept: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| match destinations.check_ip(a.ip()) {
            Ok(()) => true,
            Err(refused) => {
                first.get_or_insert(refused);
                false
            }
        })
        .collect();
    if kept.is_empty() {
        Err(first)
    } else {
        Ok(kept)
    }
}

pub(crate) fn refused(at: &Place, why: &Refused) -> TransportError {
    TransportError::new(
        ErrorKind::Destination,
        Delivery::NotSent,
        format!("{at}: the destination was refused, nothing was sent: {why}"),
    )
}

/// A resolver that answers every name with the addresses it was given: the connector of
/// a checked fetch reaches those and nothing else.
#[derive(Clone)]
pub(crate) struct Fixed(Arc<[SocketAddr]>);

impl tower_service::Service<Name> for Fixed {
    type Response = Addrs;
    type Error = io::Error;
    type Future = std::future::Ready<Result<Addrs, io::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _name: Name) -> Self::Future {
        let addrs: Vec<SocketAddr> = self.0.to_vec();
        std::future::ready(Ok(Box::new(addrs.into_iter()) as Addrs))
    }
}

/// What a checked fetch connects to.
pub(crate) enum Checked {
    /// Directly, to these addresses only, on a connection of its own.
    Direct(HttpConnector<Fixed>),
    /// Through the client's proxy, as any request (the host's text passed the rule).
    Proxied,
}

impl HttpClient {
    /// The class of the MCP server at `url`, as peer-named destinations are judged for
    /// it, from the URL's text alone: an IP literal's class, loopback for a `localhost`
    /// name, public for any other name. A name is never resolved for this: the server's
    /// own DNS could answer a private or loopback address to this lookup alone (and its
    /// public one to the MCP connection), and so widen what the URLs it names may reach.
    /// An operator whose servers live on a private network names them by address, or
    /// sets `allow_private_auth_destinations`.
    pub fn server_class(&self, url: &Uri) -> AddrClass {
        bare_host(url)
            .and_then(reach::host_class)
            .unwrap_or(AddrClass::Public)
    }

    /// How a fetch to `url` under `destinations` connects, or why it may not.
    pub(crate) async fn checked(
        &self,
        destinations: &Destinations,
        url: &Uri,
        at: &Place,
    ) -> Result<Checked, TransportError> {
        let host = bare_host(url).ok_or_else(|| {
            TransportError::new(
                ErrorKind::InvalidRequest,
                Delivery::NotSent,
                format!("{at}: the URL has no host"),
            )
        })?;
        destinations
            .check_host(host)
            .map_err(|why| refused(at, &why))?;
        if !self.goes_direct(url) {
            return Ok(Checked::Proxied);
        }
        let addrs = lookup(&self.inner.resolver, host).await.map_err(|e| {
            TransportError::new(
                ErrorKind::Connect,
                Delivery::NotSent,
                format!("{at}: the name did not resolve"),
            )
            .with_source(e)
        })?;
        let kept = allowed(destinations, addrs).map_err(|why| match why {
            Some(why) => refused(at, &why),
            None => TransportError::new(
                ErrorKind::Connect,
                Delivery::NotSent,
                format!("{at}: the name resolved to no address"),
            ),
        })?;
        let mut http = HttpConnector::new_with_resolver(Fixed(kept.into()));
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(self.inner.config.connect_timeout));
        Ok(Checked::Direct(http))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        SocketAddr::new(s.parse().unwrap(), 0)
    }

    #[test]
    fn only_allowed_addresses_are_kept() {
        let public = Destinations::new(AddrClass::Public, false);
        let mixed = vec![addr("127.0.0.1"), addr("93.184.216.34"), addr("10.0.0.1")];
        assert_eq!(
            allowed(&public, mixed).unwrap(),
            vec![addr("93.184.216.34")]
        );
        let why = allowed(&public, vec![addr("127.0.0.1"), addr("::1")]).unwrap_err();
        assert_eq!(why.map(|r| r.class), Some(AddrClass::Loopback));
        let local = Destinations::new(AddrClass::Loopback, false);
        assert_eq!(
            allowed(&local, vec![addr("127.0.0.1")]).unwrap(),
            vec![addr("127.0.0.1")]
        );
        assert_eq!(allowed(&public, Vec::new()).unwrap_err(), None);
    }
}
