//! What an application says about a server it manages, and which of its tools to serve.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use brain_mcp_proto::client::Era;
use brain_mcp_transport::stdio::StdioConfig;
use brain_tools_core::Secret;

use crate::OAuthClient;

/// The default bound on starting a managed server and reading its tools.
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);
/// Handshake-era children a stdio server keeps started and initialized by default.
pub const DEFAULT_POOL_SIZE: usize = 2;
/// Bytes of a stdio child's stderr kept for diagnostics by default (the newest).
pub const DEFAULT_STDERR_LIMIT: usize = 64 * 1024;

/// A server the application manages: a command the host starts (stdio), or an HTTP
/// endpoint with its token. Its tools are read once, when it is added, and never change
/// after that.
///
/// ```
/// use std::time::Duration;
/// use brain_mcp_bind::host::{ManagedServer, ToolSpec};
///
/// let server = ManagedServer::stdio("files", "python3")
///     .args(["server.py", "stdio"])
///     .env("LOG_LEVEL", "warning")
///     .tool(ToolSpec::new("read_file", ["tenant-a"]).rename("files_read"))
///     .tool(ToolSpec::new("search", ["tenant-a", "tenant-b"]).timeout(Duration::from_secs(20)));
/// assert_eq!(server.name(), "files");
/// ```
#[derive(Clone, Debug)]
pub struct ManagedServer {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) tools: Vec<ToolSpec>,
    pub(crate) pool_size: usize,
    pub(crate) discovery_timeout: Duration,
    pub(crate) era: Option<Era>,
    pub(crate) max_in_flight: Option<u32>,
}

/// Its `Debug` shows an HTTP server's header names, never their values (API keys).
#[derive(Clone)]
pub(crate) enum Kind {
    Stdio(StdioConfig),
    Http {
        url: String,
        token: Option<Secret>,
        /// OAuth client credentials, in place of a bearer token.
        oauth: Option<OAuthClient>,
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio(config) => f.debug_tuple("Stdio").field(config).finish(),
            Self::Http {
                url,
                token,
                oauth,
                headers,
            } => f
                .debug_struct("Http")
                .field(
                    "origin",
                    &brain_tools_core::EndpointUrl::parse(url)
                        .map(|u| u.origin().to_owned())
                        .ok(),
                )
                .field("token", token)
                .field("oauth", oauth)
                .field(
                    "headers",
                    &headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

impl ManagedServer {
    /// A stdio server: `program` (looked up on `PATH` unless it is a path) started as a
    /// child process, speaking JSON-RPC lines on stdin and stdout.
    pub fn stdio(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        let mut config = StdioConfig::new(program);
        config.stderr_limit = DEFAULT_STDERR_LIMIT;
        Self::with_kind(name, Kind::Stdio(config))
    }

    /// An HTTP server at `url` (either era), reached like any MCP binding.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::with_kind(
            name,
            Kind::Http {
                url: url.into(),
                token: None,
                oauth: None,
                headers: Vec::new(),
            },
        )
    }

    fn with_kind(name: impl Into<String>, kind: Kind) -> Self {
        Self {
            name: name.into(),
            kind,
            tools: Vec::new(),
            pool_size: DEFAULT_POOL_SIZE,
            discovery_timeout: DEFAULT_DISCOVERY_TIMEOUT,
            era: None,
            max_in_flight: None,
        }
    }

    /// At most `calls` calls in flight to this server (at least 1); a call waits for a
    /// slot inside its own deadline, and one that never gets one fails as `timeout` with
    /// `unknown_outcome` false.
    #[must_use]
    pub fn max_in_flight(mut self, calls: u32) -> Self {
        self.max_in_flight = Some(calls.max(1));
        self
    }

    /// The server's name (for diagnostics; tools are named by their [`ToolSpec`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Adds arguments to a stdio command (ignored for HTTP).
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        if let Kind::Stdio(config) = &mut self.kind {
            config.args.extend(args.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable for a stdio command (ignored for HTTP). The child
    /// inherits the host's environment otherwise, except the variables that hold the
    /// host config's tokens (every binding's `token_env`), unless set here.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Kind::Stdio(config) = &mut self.kind {
            config.env.push((key.into(), value.into()));
        }
        self
    }

    /// Starts a stdio command with only the variables set by [`Self::env`].
    #[must_use]
    pub fn clear_env(mut self) -> Self {
        if let Kind::Stdio(config) = &mut self.kind {
            config.clear_env = true;
        }
        self
    }

    /// The working directory of a stdio command.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Kind::Stdio(config) = &mut self.kind {
            config.cwd = Some(dir.into());
        }
        self
    }

    /// Bytes of a stdio child's stderr kept for diagnostics (the newest).
    #[must_use]
    pub fn stderr_limit(mut self, bytes: usize) -> Self {
        if let Kind::Stdio(config) = &mut self.kind {
            config.stderr_limit = bytes;
        }
        self
    }

    /// The bearer token of an HTTP server (ignored for stdio). It is sent only to the
    /// server's origin and never shown. Replaces [`Self::oauth`].
    #[must_use]
    pub fn bearer(mut self, token: Secret) -> Self {
        if let Kind::Http {
            token: t, oauth, ..
        } = &mut self.kind
        {
            *t = Some(token);
            *oauth = None;
        }
        self
    }

    /// OAuth for an HTTP server (ignored for stdio): tokens got and renewed with
    /// `client`, as a config binding's `oauth` block gets them, for listing the server's
    /// tools and for every call. Replaces [`Self::bearer`]. A credential source set on
    /// the host ([`ToolHost::set_credentials`](crate::ToolHost::set_credentials)) still
    /// decides per tenant when it answers anything but `FromBinding`.
    #[must_use]
    pub fn oauth(mut self, client: OAuthClient) -> Self {
        if let Kind::Http { token, oauth, .. } = &mut self.kind {
            *oauth = Some(client);
            *token = None;
        }
        self
    }

    /// Adds a header sent on every request to an HTTP server (ignored for stdio): for
    /// discovery and every call. Static, non-secret values only (a token belongs in
    /// [`Self::bearer`]); the rules are a host config binding's `headers`
    /// (`brain_tools_core::check_headers`), checked when the server is added.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Kind::Http { headers, .. } = &mut self.kind {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Serves one of the server's tools.
    #[must_use]
    pub fn tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// How many handshake-era children to keep started and initialized ahead of calls
    /// (0 starts one per call, on the call's time). A 2026-era server uses one child for
    /// every call and ignores this.
    #[must_use]
    pub fn pool_size(mut self, children: usize) -> Self {
        self.pool_size = children;
        self
    }

    /// Speak `era` to a stdio server without probing it: for a server that speaks both
    /// eras, this picks one (as [`McpClient::set_era`](crate::McpClient::set_era) does
    /// over HTTP). Ignored for HTTP servers: set their era on the host's client.
    #[must_use]
    pub fn era(mut self, era: Era) -> Self {
        self.era = Some(era);
        self
    }

    /// The bound on starting the server and reading its tools when it is added.
    #[must_use]
    pub fn discovery_timeout(mut self, timeout: Duration) -> Self {
        self.discovery_timeout = timeout;
        self
    }
}

/// One tool of a managed server to serve: its name on the server, the tenants that may
/// use it, and optionally the name the model sees, a timeout and an output limit. The
/// rules are those of a host config binding (`docs/config.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    pub(crate) remote: String,
    pub(crate) name: Option<String>,
    pub(crate) tenants: Vec<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_output_bytes: Option<usize>,
}

impl ToolSpec {
    /// The server's tool `remote`, for `tenants`. The model sees it under the remote
    /// name made a valid binding name (as `mcp-tools` does) unless renamed.
    pub fn new<I, S>(remote: impl Into<String>, tenants: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            remote: remote.into(),
            name: None,
            tenants: tenants.into_iter().map(Into::into).collect(),
            timeout: None,
            max_output_bytes: None,
        }
    }

    /// The name the model sees.
    #[must_use]
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The limit on each call (whole seconds, rounded up; default 300 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The largest result accepted (default 1 MiB).
    #[must_use]
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = Some(bytes);
        self
    }
}
