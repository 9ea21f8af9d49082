//! Real MCP peer servers for the end-to-end tests, installed and started on demand.
//!
//! [`Peer::start`] makes sure the peer is installed under `target/peers` (by running the
//! project's `peers/install.sh` under a file lock, once per process), starts it on a free
//! port with its output in `target/peers/logs`, waits until it accepts connections and
//! stops it again when the [`Peer`] is dropped.
//!
//! The peers:
//! - [`PeerKind::Everything`]: the TypeScript reference server (handshake era only).
//! - [`PeerKind::PythonSdk`]: `peers/python/server.py` on the Python SDK (both eras).
//! - [`PeerKind::Rmcp`]: `peers/rmcp-server` on the Rust SDK (sessions and 2026 requests).

mod install;
mod process;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::PathBuf;

pub use process::Peer;

/// Which real peer to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerKind {
    /// npm `@modelcontextprotocol/server-everything`, streamable HTTP, handshake era.
    Everything,
    /// The Python SDK (`mcp` on PyPI) running `peers/python/server.py`, both eras.
    PythonSdk,
    /// The rmcp crate running `peers/rmcp-server`.
    Rmcp,
}

impl PeerKind {
    /// Every peer, in a fixed order.
    pub const ALL: [Self; 3] = [Self::Everything, Self::PythonSdk, Self::Rmcp];

    /// The name `peers/install.sh` knows this peer by.
    pub fn install_name(self) -> &'static str {
        match self {
            Self::Everything => "everything",
            Self::PythonSdk => "python",
            Self::Rmcp => "rmcp",
        }
    }
}

impl fmt::Display for PeerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.install_name())
    }
}

/// Why a peer could not be installed or started.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// `peers/install.sh` failed or could not be run.
    #[error("installing peer `{kind}` failed: {message}")]
    Install {
        /// The peer being installed.
        kind: PeerKind,
        /// What went wrong, with the installer's output.
        message: String,
    },
    /// A file or process operation failed.
    #[error("{what} ({path}): {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or program involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The peer process exited or never accepted connections.
    #[error("peer `{kind}` did not start: {reason}\n--- last lines of {log} ---\n{tail}")]
    Start {
        /// The peer being started.
        kind: PeerKind,
        /// What was observed.
        reason: String,
        /// The peer's log file.
        log: PathBuf,
        /// The end of that log.
        tail: String,
    },
}

/// A program and its arguments: how to run the Python SDK server over stdio.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StdioCommand {
    /// The interpreter inside the peers' virtual environment.
    pub program: PathBuf,
    /// The arguments: the server script and `stdio`.
    pub args: Vec<String>,
}

impl StdioCommand {
    /// The same command as a [`std::process::Command`] (stdio not yet configured).
    pub fn to_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        cmd
    }
}

/// The workspace root: the parent of this crate's directory.
pub fn project_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// Where the peers are installed: `$BRAIN_PEERS_DIR`, or `target/peers` in the workspace.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("BRAIN_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("target").join("peers"))
}
