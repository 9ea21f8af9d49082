//! The command-line programs, as functions the binaries call and tests drive.
//!
//! Each takes its arguments and output streams and returns the process exit code.

pub mod call;
mod flags;
mod ids;
pub mod tools;

/// Exit code: the command ran and its result is not an error.
pub const EXIT_OK: i32 = 0;
/// Exit code: the command ran and its result is an error.
pub const EXIT_FAILED: i32 = 1;
/// Exit code: the command line or the config is invalid; nothing was sent.
pub const EXIT_USAGE: i32 = 2;

/// A multi-threaded runtime for a command (two worker threads are plenty for one call).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}
