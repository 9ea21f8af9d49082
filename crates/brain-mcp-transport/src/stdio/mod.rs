//! A child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! Each message is one line. Lines on stdout that are not JSON-RPC (servers print
//! banners and logs there despite the rules) are skipped and counted. stderr is read
//! continuously into a bounded ring buffer, so a chatty child never blocks on a full
//! pipe and the last output is there for diagnostics. Dropping a [`StdioProcess`]
//! kills the child; [`StdioProcess::close`] first closes stdin and waits briefly.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod child;
mod group;

pub use child::{CLOSE_GRACE, ChildLink, Inbox, OnEnd, UNANSWERED_DEADLINE};
pub use group::GROUP_GRACE;
use group::Group;

use brain_mcp_proto::jsonrpc::Inbound;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::stream::Received;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// How to start a stdio server. `Debug` shows environment variable names only: their
/// values often hold credentials.
#[derive(Clone)]
#[non_exhaustive]
pub struct StdioConfig {
    /// The program to run (looked up on `PATH` when not a path).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables to set for the child.
    pub env: Vec<(OsString, OsString)>,
    /// Variables of ours the child must not inherit (credentials meant for someone
    /// else); one also in `env` is set to that value.
    pub env_remove: Vec<OsString>,
    /// Start from an empty environment instead of inheriting ours (then only `env`).
    pub clear_env: bool,
    /// Working directory, if not ours.
    pub cwd: Option<PathBuf>,
    /// Longest accepted stdout line in bytes (default 16 MiB).
    pub max_line: usize,
    /// Bytes of stderr kept, the most recent ones (default 64 KiB).
    pub stderr_limit: usize,
    /// How long [`StdioProcess::close`] waits after closing stdin before killing
    /// (default 2 s).
    pub close_grace: Duration,
}

impl StdioConfig {
    /// A configuration for `program` with default limits.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            clear_env: false,
            cwd: None,
            max_line: 16 << 20,
            stderr_limit: 64 << 10,
            close_grace: Duration::from_secs(2),
        }
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

impl std::fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let env: Vec<_> = self.env.iter().map(|(k, _)| k).collect();
        f.debug_struct("StdioConfig")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &env)
            .field("env_remove", &self.env_remove)
            .field("clear_env", &self.clear_env)
            .field("cwd", &self.cwd)
            .field("max_line", &self.max_line)
            .field("stderr_limit", &self.stderr_limit)
            .field("close_grace", &self.close_grace)
            .finish()
    }
}

/// A stdio transport failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StdioError {
    /// The program could not be started.
    #[error("could not start `{program}`")]
    Spawn {
        /// The program as configured.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Writing to the child's stdin or reading its stdout failed.
    #[error("stdio pipe to the child failed")]
    Io(#[source] std::io::Error),
    /// The child printed a stdout line longer than the limit; the line is skipped.
    #[error("the child printed a line longer than {limit} bytes")]
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// A message to send contains a line break, which would split it in two.
    #[error("a stdio message must be a single line")]
    MessageHasNewline,
    /// stdin was already closed.
    #[error("the child's stdin is closed")]
    Closed,
}

/// A running stdio server.
#[derive(Debug)]
pub struct StdioProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<Ring>>,
    stderr_task: Option<JoinHandle<()>>,
    /// The process group the child leads, ended with it.
    group: Group,
    max_line: usize,
    close_grace: Duration,
    skipped: u64,
    /// The rest of an over-long line is being discarded.
    skipping: bool,
    line: Vec<u8>,
    /// Messages of a batch line not handed out yet.
    decoded: VecDeque<Received>,
}

impl StdioProcess {
    /// Starts the child with piped stdin, stdout and stderr.
    pub fn spawn(config: StdioConfig) -> Result<Self, StdioError> {
        let mut cmd = Command::new(&config.program);
        cmd.args(&config.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group: the whole tree it starts ends with it (`group`).
        #[cfg(unix)]
        cmd.process_group(0);
        if config.clear_env {
            cmd.env_clear();
        }
        for key in &config.env_remove {
            cmd.env_remove(key);
        }
        cmd.envs(config.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &config.cwd {
            cmd.current_dir(dir);
        }
        let spawn_err = |source| StdioError::Spawn {
            program: config.program.to_string_lossy().into_owned(),
            source,
        };
        let mut child = cmd.spawn().map_err(spawn_err)?;
        let group = Group::led_by(child.id());
        let missing = || spawn_err(std::io::Error::other("a pipe was not created"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let mut stderr = child.stderr.take().ok_or_else(missing)?;
        let ring = Arc::new(Mutex::new(Ring::new(config.stderr_limit)));
        let sink = ring.clone();
        let stderr_task = tokio::spawn(async move {
            let mut buf = vec![0u8; 8 << 10];
            loop {
                match stderr.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if let Ok(mut r) = sink.lock() {
                            r.push(&buf[..n]);
                        }
                    }
                }
            }
        });
        Ok(Self {
            child,
            group,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            stderr: ring,
            stderr_task: Some(stderr_task),
            max_line: config.max_line,
            close_grace: config.close_grace,
            skipped: 0,
            skipping: false,
            line: Vec::new(),
            decoded: VecDeque::new(),
        })
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Writes one message followed by a newline.
    pub async fn send(&mut self, message: &[u8]) -> Result<(), StdioError> {
        if message.contains(&b'\n') || message.contains(&b'\r') {
            return Err(StdioError::MessageHasNewline);
        }
        let stdin = self.stdin.as_mut().ok_or(StdioError::Closed)?;
        stdin.write_all(message).await.map_err(StdioError::Io)?;
        stdin.write_all(b"\n").await.map_err(StdioError::Io)?;
        stdin.flush().await.map_err(StdioError::Io)
    }

    /// The next JSON-RPC message from stdout, decoded once (a batch line gives its
    /// messages one by one); `None` when stdout closes. Lines that are not JSON-RPC are
    /// skipped and counted ([`skipped_lines`](Self::skipped_lines)).
    pub async fn recv(&mut self) -> Option<Result<Received, StdioError>> {
        loop {
            if let Some(next) = self.decoded.pop_front() {
                return Some(Ok(next));
            }
            match self.read_line().await {
                Err(e) => return Some(Err(e)),
                Ok(false) => return None,
                Ok(true) => {}
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = String::from_utf8(line)
                .map(|text| brain_mcp_proto::text::repair_lone_surrogates(&text).unwrap_or(text));
            let bytes = text.as_ref().map_or(0, String::len);
            match text.map(|t| Inbound::decode_all(&t)) {
                Ok(Ok(messages)) => {
                    let each = bytes / messages.len().max(1);
                    self.decoded
                        .extend(messages.into_iter().map(|m| Received::new(m, false, each)));
                }
                _ => {
                    self.skipped += 1;
                    tracing::debug!(skipped = self.skipped, "skipped a non-JSON-RPC stdout line");
                }
            }
        }
    }

    /// Reads one line into `self.line` (without the newline). `Ok(false)` at EOF.
    /// An over-long line fails at once; its rest is discarded by the next read.
    async fn read_line(&mut self) -> Result<bool, StdioError> {
        self.line.clear();
        loop {
            let buf = self.stdout.fill_buf().await.map_err(StdioError::Io)?;
            if buf.is_empty() {
                // A final line without a newline still counts.
                let had = !self.skipping && !self.line.is_empty();
                self.skipping = false;
                return Ok(had);
            }
            let (part, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            let used = end.unwrap_or(buf.len());
            if self.skipping {
                self.skipping = end.is_none();
                self.stdout.consume(used);
                continue;
            }
            if self.line.len() + part.len() > self.max_line {
                self.line.clear();
                self.skipping = end.is_none();
                self.stdout.consume(used);
                return Err(StdioError::LineTooLong {
                    limit: self.max_line,
                });
            }
            self.line.extend_from_slice(part);
            self.stdout.consume(used);
            if end.is_some() {
                return Ok(true);
            }
        }
    }

    /// Takes the writing side out, for a driver that writes from one task and reads from
    /// another: afterwards [`send`](Self::send) fails with [`StdioError::Closed`] and
    /// dropping the [`StdioSender`] closes the child's stdin. `None` when already taken
    /// (or closed).
    pub fn take_sender(&mut self) -> Option<StdioSender> {
        self.stdin.take().map(|stdin| StdioSender { stdin })
    }

    /// A handle on the stderr ring buffer that stays readable from other tasks, and
    /// after the process is gone.
    pub fn stderr_handle(&self) -> StderrTail {
        StderrTail(self.stderr.clone())
    }

    /// How many stdout lines were skipped as not JSON-RPC.
    pub fn skipped_lines(&self) -> u64 {
        self.skipped
    }

    /// The most recent stderr output (lossy UTF-8), at most the configured size.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|r| r.text()).unwrap_or_default()
    }

    /// Ends the child gracefully: closes stdin, waits up to the grace period, then
    /// kills it; whatever else its process group still holds gets SIGTERM, then SIGKILL
    /// after [`GROUP_GRACE`]. Returns the child's exit status.
    pub async fn close(mut self) -> Result<ExitStatus, StdioError> {
        drop(self.stdin.take());
        let status = match tokio::time::timeout(self.close_grace, self.child.wait()).await {
            Ok(status) => status.map_err(StdioError::Io)?,
            Err(_) => {
                // The group first (SIGTERM), the leader at once if it is still there.
                self.group.end();
                self.child.start_kill().map_err(StdioError::Io)?;
                self.child.wait().await.map_err(StdioError::Io)?
            }
        };
        self.group.end();
        // Let the stderr reader catch the last output, briefly.
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(100), task).await;
        }
        Ok(status)
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        // The rest of the tree; `kill_on_drop` ends the child itself. The stderr reader
        // must not outlive us.
        self.group.end();
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

/// The writing side of a [`StdioProcess`] (see [`StdioProcess::take_sender`]).
#[derive(Debug)]
pub struct StdioSender {
    stdin: ChildStdin,
}

impl StdioSender {
    /// Writes one message followed by a newline, as [`StdioProcess::send`] does.
    pub async fn send(&mut self, message: &[u8]) -> Result<(), StdioError> {
        if message.contains(&b'\n') || message.contains(&b'\r') {
            return Err(StdioError::MessageHasNewline);
        }
        self.stdin
            .write_all(message)
            .await
            .map_err(StdioError::Io)?;
        self.stdin.write_all(b"\n").await.map_err(StdioError::Io)?;
        self.stdin.flush().await.map_err(StdioError::Io)
    }
}

/// A shared view of a child's recent stderr (see [`StdioProcess::stderr_handle`]).
#[derive(Clone, Debug)]
pub struct StderrTail(Arc<Mutex<Ring>>);

impl StderrTail {
    /// The most recent stderr output (lossy UTF-8), at most the configured size.
    pub fn text(&self) -> String {
        self.0.lock().map(|r| r.text()).unwrap_or_default()
    }
}

/// The last `cap` bytes written.
#[derive(Debug)]
struct Ring {
    cap: usize,
    buf: VecDeque<u8>,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            buf: VecDeque::new(),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        let mut v = Vec::with_capacity(a.len() + b.len());
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::{Ring, StdioConfig};

    #[test]
    fn debug_hides_environment_values() {
        let cfg = StdioConfig::new("srv").env("API_KEY", "hunter2");
        let shown = format!("{cfg:?}");
        assert!(shown.contains("API_KEY"));
        assert!(!shown.contains("hunter2"));
    }

    #[test]
    fn ring_keeps_the_last_bytes() {
        let mut r = Ring::new(5);
        r.push(b"abc");
        r.push(b"defg");
        assert_eq!(r.text(), "cdefg");
        r.push(b"0123456789");
        assert_eq!(r.text(), "56789");
    }
}
