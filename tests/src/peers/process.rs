//! Starting a peer process on a free port, waiting for it, and stopping it on drop.

use std::collections::HashSet;
use std::fs::{self, File};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::install::{ensure_installed, tail};
use super::{PeerError, PeerKind, StdioCommand, peers_dir, project_root};

/// How long a peer may take to accept its first connection.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a start is retried when the peer died right away (e.g. the port was taken).
const START_ATTEMPTS: usize = 3;

/// A running peer server; the process is killed when this is dropped.
#[derive(Debug)]
pub struct Peer {
    kind: PeerKind,
    port: u16,
    log: PathBuf,
    child: Child,
}

impl Peer {
    /// Installs `kind` if needed, starts it on a free port and waits until it listens.
    pub fn start(kind: PeerKind) -> Result<Self, PeerError> {
        Self::start_with_env(kind, &[])
    }

    /// Like [`Peer::start`], with extra environment variables for the peer process
    /// (for example `PEER_PAGE_SIZE` for the Python server).
    pub fn start_with_env(kind: PeerKind, envs: &[(&str, &str)]) -> Result<Self, PeerError> {
        ensure_installed(kind)?;
        let logs = peers_dir().join("logs");
        fs::create_dir_all(&logs).map_err(|source| PeerError::Io {
            what: "creating the peer log directory",
            path: logs.clone(),
            source,
        })?;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(kind, envs, &logs) {
                Ok(peer) => return Ok(peer),
                Err(err @ PeerError::Start { .. }) => last = Some(err),
                Err(other) => return Err(other),
            }
        }
        Err(last.unwrap_or_else(|| PeerError::Start {
            kind,
            reason: "no start attempt was made".into(),
            log: logs,
            tail: String::new(),
        }))
    }

    fn try_start(
        kind: PeerKind,
        envs: &[(&str, &str)],
        logs: &std::path::Path,
    ) -> Result<Self, PeerError> {
        let port = free_port()?;
        let log = logs.join(format!("{kind}-{port}.log"));
        let out = File::create(&log).map_err(|source| PeerError::Io {
            what: "creating the peer log",
            path: log.clone(),
            source,
        })?;
        let err = out.try_clone().map_err(|source| PeerError::Io {
            what: "sharing the peer log",
            path: log.clone(),
            source,
        })?;
        let mut cmd = http_command(kind, port);
        cmd.envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .current_dir(project_root());
        let child = cmd.spawn().map_err(|source| PeerError::Io {
            what: "spawning the peer",
            path: PathBuf::from(cmd.get_program()),
            source,
        })?;
        let mut peer = Self {
            kind,
            port,
            log,
            child,
        };
        peer.wait_listening()?;
        Ok(peer)
    }

    fn wait_listening(&mut self) -> Result<(), PeerError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.start_error(format!("the process exited with {status}")));
            }
            // A connection alone could reach someone else who won the port; each peer
            // also logs the port it bound, which only our child writes to this file.
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
                && self.log_mentions_port()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.start_error(format!(
                    "nothing accepted connections on {addr} within {}s",
                    START_TIMEOUT.as_secs()
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_mentions_port(&self) -> bool {
        fs::read_to_string(&self.log)
            .map(|text| {
                text.contains(&format!(":{}", self.port))
                    || text.contains(&format!("port {}", self.port))
            })
            .unwrap_or(false)
    }

    fn start_error(&self, reason: String) -> PeerError {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        PeerError::Start {
            kind: self.kind,
            reason,
            log: self.log.clone(),
            tail: tail(&text, 30),
        }
    }

    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The port the peer listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Which peer this is.
    pub fn kind(&self) -> PeerKind {
        self.kind
    }

    /// The file that collects the peer's stdout and stderr.
    pub fn log_path(&self) -> &std::path::Path {
        &self.log
    }

    /// How to run the TypeScript reference server over stdio (installing it first if
    /// needed).
    pub fn everything_stdio_command() -> Result<StdioCommand, PeerError> {
        ensure_installed(PeerKind::Everything)?;
        Ok(StdioCommand {
            program: PathBuf::from("node"),
            args: vec![
                everything_script().display().to_string(),
                "stdio".to_owned(),
            ],
        })
    }

    /// How to run the rmcp server over stdio (building it first if needed).
    pub fn rmcp_stdio_command() -> Result<StdioCommand, PeerError> {
        ensure_installed(PeerKind::Rmcp)?;
        Ok(StdioCommand {
            program: peers_dir().join("rmcp/debug/rmcp-peer-server"),
            args: vec!["stdio".to_owned()],
        })
    }

    /// How to run `peers/faults/stdio_fault.py` in `mode` (see the script), with
    /// `marker` on its command line so tests can find its processes. Needs `python3`.
    pub fn fault_stdio_command(mode: &str, marker: &str) -> StdioCommand {
        StdioCommand {
            program: PathBuf::from("python3"),
            args: vec![
                project_root()
                    .join("peers/faults/stdio_fault.py")
                    .display()
                    .to_string(),
                mode.to_owned(),
                format!("--marker={marker}"),
            ],
        }
    }

    /// How to run the Python SDK server over stdio (installing it first if needed).
    pub fn python_stdio_command() -> Result<StdioCommand, PeerError> {
        ensure_installed(PeerKind::PythonSdk)?;
        Ok(StdioCommand {
            program: python_interpreter(),
            args: vec![python_script().display().to_string(), "stdio".to_owned()],
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The command that serves `kind` over streamable HTTP on `port`.
fn http_command(kind: PeerKind, port: u16) -> Command {
    let dir = peers_dir();
    match kind {
        PeerKind::Everything => {
            let mut cmd = Command::new("node");
            cmd.arg(everything_script())
                .arg("streamableHttp")
                .env("PORT", port.to_string());
            cmd
        }
        PeerKind::PythonSdk => {
            let mut cmd = Command::new(python_interpreter());
            cmd.arg(python_script()).arg(port.to_string());
            cmd
        }
        PeerKind::Rmcp => {
            let mut cmd = Command::new(dir.join("rmcp/debug/rmcp-peer-server"));
            cmd.arg(port.to_string());
            cmd
        }
    }
}

fn everything_script() -> PathBuf {
    peers_dir()
        .join("everything/node_modules/@modelcontextprotocol/server-everything")
        .join("dist/index.js")
}

fn python_interpreter() -> PathBuf {
    peers_dir().join("python-venv/bin/python")
}

fn python_script() -> PathBuf {
    project_root().join("peers/python/server.py")
}

/// Ports this process has handed to a peer already.
static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A port that was free a moment ago and that this process never gave another peer (the
/// peer binds it itself; a race lost to another process is retried). The kernel may hand
/// a just-released port to the next `bind(0)`; two peers started side by side on one port
/// would share a log file, so one could pass for started on the other's socket and die
/// under a request when the other is dropped.
fn free_port() -> Result<u16, PeerError> {
    let mut handed = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    let handed = handed.get_or_insert_with(HashSet::new);
    loop {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| PeerError::Io {
                what: "finding a free port",
                path: PathBuf::from("127.0.0.1:0"),
                source,
            })?;
        let port = listener
            .local_addr()
            .map(|a| a.port())
            .map_err(|source| PeerError::Io {
                what: "reading the free port",
                path: PathBuf::from("127.0.0.1:0"),
                source,
            })?;
        if handed.insert(port) {
            return Ok(port);
        }
    }
}
