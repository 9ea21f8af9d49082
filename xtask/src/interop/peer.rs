//! Starting the installed peers on free ports, and running child commands with a bound.

use std::fs::{self, File};
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a peer may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The real servers interop runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The TypeScript reference server (`server-everything`).
    Everything,
    /// `peers/python/server.py` on the Python SDK.
    Python,
    /// `peers/rmcp-server` on rmcp.
    Rmcp,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Everything => "everything",
            Self::Python => "python",
            Self::Rmcp => "rmcp",
        }
    }
}

/// A running peer, killed on drop.
pub(crate) struct Peer {
    pub(crate) addr: SocketAddr,
    pub(crate) log: PathBuf,
    child: Child,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the peers are installed (as `peers/install.sh` and the test harness agree).
pub(crate) fn peers_dir() -> PathBuf {
    std::env::var_os("BRAIN_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::cmd::project_root().join("target").join("peers"))
}

/// Starts `kind` on a free port and waits until it listens (and its log names the port).
pub(crate) fn start(kind: Kind, logs: &Path) -> Result<Peer, String> {
    let mut last = String::new();
    for _ in 0..3 {
        match try_start(kind, logs) {
            Ok(peer) => return Ok(peer),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn try_start(kind: Kind, logs: &Path) -> Result<Peer, String> {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("finding a free port: {e}"))?
        .port();
    let log = logs.join(format!("interop-{}-{port}.log", kind.name()));
    let out = File::create(&log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let dir = peers_dir();
    let mut cmd = match kind {
        Kind::Everything => {
            let mut c = Command::new("node");
            c.arg(dir.join(
                "everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ))
            .arg("streamableHttp")
            .env("PORT", port.to_string());
            c
        }
        Kind::Python => {
            let mut c = Command::new(dir.join("python-venv/bin/python"));
            c.arg(crate::cmd::project_root().join("peers/python/server.py"))
                .arg(port.to_string());
            c
        }
        Kind::Rmcp => {
            let mut c = Command::new(dir.join("rmcp/debug/rmcp-peer-server"));
            c.arg(port.to_string());
            c
        }
    };
    let child = cmd
        .current_dir(crate::cmd::project_root())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", kind.name()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut peer = Peer { addr, log, child };
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = peer.child.try_wait() {
            return Err(format!(
                "{} exited with {status}; see {}",
                kind.name(),
                peer.log.display()
            ));
        }
        let mentions = fs::read_to_string(&peer.log)
            .is_ok_and(|t| t.contains(&format!(":{port}")) || t.contains(&format!("port {port}")));
        if mentions && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(peer);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{} did not listen on {addr} within {} s; see {}",
                kind.name(),
                START_TIMEOUT.as_secs(),
                peer.log.display()
            ));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// What a bounded child run produced.
pub(crate) struct Output {
    /// `None` when the command was killed at its bound.
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cmd` with piped output, killing it after `limit`.
pub(crate) fn run_bounded(mut cmd: Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {shown}: {e}"))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}
