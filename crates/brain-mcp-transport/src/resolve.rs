//! Name resolution: the system's resolver, except for `localhost` and `*.localhost`,
//! which this client resolves itself to the loopback addresses (RFC 6761 lets it).
//!
//! Those names are never sent through a proxy from the environment (the proxy cannot
//! reach this machine's loopback), so they must never leave the machine either: a
//! resolver or a hosts file that answered `mcp.localhost` with another machine's address
//! would otherwise receive the request, bearer token included, directly.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};

/// The client's resolver (see the module docs).
#[derive(Clone)]
pub(crate) struct Resolver {
    system: GaiResolver,
}

impl Resolver {
    pub(crate) fn new() -> Self {
        Self {
            system: GaiResolver::new(),
        }
    }
}

/// Whether `name` is `localhost` or under it (one trailing dot allowed, any case).
pub(crate) fn is_localhost_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// The addresses a name resolved to.
pub(crate) type Addrs = Box<dyn Iterator<Item = SocketAddr> + Send>;

impl tower_service::Service<Name> for Resolver {
    type Response = Addrs;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, io::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        tower_service::Service::<Name>::poll_ready(&mut self.system, cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        if is_localhost_name(name.as_str()) {
            // The port is set by the connector.
            let loopback: Addrs = Box::new(
                [
                    SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
                    SocketAddr::from((Ipv6Addr::LOCALHOST, 0)),
                ]
                .into_iter(),
            );
            return Box::pin(std::future::ready(Ok(loopback)));
        }
        let lookup = tower_service::Service::<Name>::call(&mut self.system, name);
        Box::pin(async move {
            let found = lookup.await?;
            Ok(Box::new(found) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_names() {
        for name in ["localhost", "LOCALHOST.", "mcp.localhost", "a.b.Localhost."] {
            assert!(is_localhost_name(name), "{name}");
        }
        for name in [
            "localhost.example",
            "notlocalhost",
            "localhost..",
            "example.com",
        ] {
            assert!(!is_localhost_name(name), "{name}");
        }
    }

    #[tokio::test]
    async fn localhost_names_resolve_to_loopback_without_asking_the_system() {
        let mut resolver = Resolver::new();
        let name: Name = "evil.localhost".parse().expect("name");
        let addrs: Vec<SocketAddr> = tower_service::Service::call(&mut resolver, name)
            .await
            .expect("resolved")
            .collect();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
