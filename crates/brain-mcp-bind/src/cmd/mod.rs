//! The command-line programs, as functions the binaries call and tests drive.
//!
//! Each takes its arguments and output streams and returns the process exit code.

pub mod call;
mod flags;
mod ids;
mod logging;
mod process;
pub mod tools;

/// Exit code: the command ran and its result is not an error.
pub const EXIT_OK: i32 = 0;
/// Exit code: the command ran and its result is an error.
pub const EXIT_FAILED: i32 = 1;
/// Exit code: the command line or the config is invalid; nothing was sent.
pub const EXIT_USAGE: i32 = 2;

/// The most bytes of one line a program writes to stderr about a failure.
const STDERR_LINE_LIMIT: usize = 4096;

/// `text` as one stderr line: control and invisible characters escaped, then cut to
/// [`STDERR_LINE_LIMIT`] bytes (escaping can grow text fourfold).
pub(crate) fn stderr_line(text: &str) -> String {
    let safe = brain_mcp_proto::text::terminal_safe(text);
    brain_mcp_proto::text::cut(&safe, STDERR_LINE_LIMIT).into_owned()
}

/// A multi-threaded runtime for a command (two worker threads are plenty for one call).
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Ends a program's runtime without waiting for work left behind: a schema check that
/// outlived its call (it holds one bounded permit) must not keep the process from exiting.
pub(crate) fn leave(runtime: tokio::runtime::Runtime) {
    runtime.shutdown_background();
}
