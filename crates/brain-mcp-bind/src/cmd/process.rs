//! What a program needs from its process: arguments that may not be UTF-8, and the
//! signals that stop it (Ctrl-C, `SIGTERM` from a service manager or container runtime,
//! `SIGHUP` from a closing terminal).
//!
//! The first stop signal asks the command to stop cleanly (cancel the call, close the
//! session, report). In a program started through [`run`], a second one exits at once with
//! [`EXIT_FAILED`]; when the command functions run inside another program (tests), a second
//! signal is only noted, since exiting would end the host.

use std::ffi::OsString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{EXIT_FAILED, EXIT_USAGE};

/// Set by [`run`]: this process is one of our programs, so a second signal may exit it.
static OWN_PROCESS: AtomicBool = AtomicBool::new(false);

/// Whether this process is one of our programs (started through [`run`]), rather than a
/// host running the command functions (tests).
pub(crate) fn own_process() -> bool {
    OWN_PROCESS.load(Ordering::SeqCst)
}

/// Runs a program: checks that every argument is UTF-8 (else one line on stderr and exit
/// [`EXIT_USAGE`]), then calls `main` with them and exits with its code.
pub(crate) fn run(name: &str, main: impl FnOnce(&[String]) -> i32) -> ! {
    OWN_PROCESS.store(true, Ordering::SeqCst);
    let args = match utf8_args(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(position) => {
            let _ = writeln!(
                std::io::stderr(),
                "{name}: argument {position} is not valid UTF-8; every argument must be text"
            );
            std::process::exit(EXIT_USAGE);
        }
    };
    std::process::exit(main(&args));
}

/// The arguments as strings, or the 1-based position of the first that is not UTF-8.
fn utf8_args(args: impl Iterator<Item = OsString>) -> Result<Vec<String>, usize> {
    args.enumerate()
        .map(|(i, arg)| arg.into_string().map_err(|_| i + 1))
        .collect()
}

/// The stop signals, listened for from creation on (a signal arriving before anyone
/// awaits [`Signals::next`] is not lost).
pub(crate) struct Signals {
    #[cfg(unix)]
    streams: Vec<(tokio::signal::unix::Signal, &'static str)>,
}

impl Signals {
    /// Starts listening. Must run inside the runtime. A signal that cannot be listened
    /// for (a platform without it) is left at its default action.
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let kinds = [
                (SignalKind::interrupt(), "SIGINT"),
                (SignalKind::terminate(), "SIGTERM"),
                (SignalKind::hangup(), "SIGHUP"),
            ];
            let streams = kinds
                .into_iter()
                .filter_map(|(kind, name)| signal(kind).ok().map(|s| (s, name)))
                .collect();
            Self { streams }
        }
        #[cfg(not(unix))]
        {
            Self {}
        }
    }

    /// The name of the next stop signal received; pending forever when none can arrive.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                return std::future::pending().await;
            }
            let waits = self.streams.iter_mut().map(|(stream, name)| {
                Box::pin(async move {
                    stream.recv().await;
                    *name
                })
            });
            futures_select(waits).await
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => "Ctrl-C",
                Err(_) => std::future::pending().await,
            }
        }
    }

    /// After the first signal: waits for a second one and then, in one of our programs,
    /// exits at once (cleanup still running is abandoned).
    pub(crate) fn exit_on_second(mut self, program: &'static str) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let name = self.next().await;
            if OWN_PROCESS.load(Ordering::SeqCst) {
                let _ = writeln!(
                    std::io::stderr(),
                    "{program}: {name} again: exiting without waiting for cleanup"
                );
                std::process::exit(EXIT_FAILED);
            }
        })
    }
}

/// The first of `waits` to finish.
#[cfg(unix)]
async fn futures_select<F>(waits: impl Iterator<Item = F>) -> &'static str
where
    F: Future<Output = &'static str> + Unpin,
{
    let mut waits: Vec<F> = waits.collect();
    std::future::poll_fn(|cx| {
        for wait in &mut waits {
            if let std::task::Poll::Ready(name) = std::pin::Pin::new(wait).poll(cx) {
                return std::task::Poll::Ready(name);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_first_argument_that_is_not_utf8_is_named() {
        use std::os::unix::ffi::OsStringExt;
        let args = vec![
            OsString::from("-tool"),
            OsString::from("x"),
            OsString::from_vec(vec![0x66, 0xff, 0x6f]),
        ];
        assert_eq!(utf8_args(args.into_iter()), Err(3));
        let fine = vec![OsString::from("-h")];
        assert_eq!(utf8_args(fine.into_iter()), Ok(vec!["-h".to_owned()]));
    }
}
