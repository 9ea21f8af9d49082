//! Where authorization's requests may go: the client's pool and the destination rule
//! for the URLs a server names, found once per fetch from the server's class.

use brain_mcp_proto::auth::reach::{AddrClass, Destinations};
use brain_mcp_transport::HttpClient;
use http::Uri;

/// What the URLs a server names may reach: the server's URL, from which its class is
/// found (only when a document or token is to be fetched), and the host's allowance.
#[derive(Debug)]
pub(crate) struct Reach<'a> {
    /// The client's HTTP pool.
    pub(crate) http: &'a HttpClient,
    /// The MCP server's URL, as configured.
    pub(crate) server: &'a Uri,
    /// The host config's `allow_private_auth_destinations`.
    pub(crate) allow_private: bool,
    /// The server's class when set (tests simulate servers off loopback with it), else
    /// found from `server`.
    pub(crate) class: Option<AddrClass>,
}

impl Reach<'_> {
    /// The pool and the destination rule for this server, its class found now.
    pub(super) async fn net(&self) -> Net<'_> {
        let class = match self.class {
            Some(class) => class,
            None => self.http.server_class(self.server),
        };
        Net {
            http: self.http,
            destinations: Destinations::new(class, self.allow_private),
        }
    }
}

/// The pool, and where the URLs a server names may go: every fetch of one carries it.
#[derive(Debug)]
pub(crate) struct Net<'a> {
    pub(crate) http: &'a HttpClient,
    pub(crate) destinations: Destinations,
}
