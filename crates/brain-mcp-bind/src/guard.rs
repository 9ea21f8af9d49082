//! The last guard on a service's own log output: the step the programs apply to every
//! line they write, for an embedder to put between its log formatter and its sink.
//!
//! The libraries already pass every value a peer sent through the redaction step
//! before they emit it. A service's own events, another crate's, or a field someone adds
//! later can still carry a token a server echoed; a [`RedactingWriter`] removes every
//! secret the process knows (see `brain_mcp_proto::text::Secret`) from each line, escapes
//! every character a terminal would act on, and bounds the line, before the line reaches
//! the sink.
//!
//! With `tracing-subscriber`'s formatter, which makes one writer per event. Turn its
//! colours off: the guard escapes the escape character like any other a terminal would
//! act on, so colour codes would print as text (`\x1b[2m`).
//!
//! ```no_run
//! use brain_mcp_bind::RedactingWriter;
//!
//! tracing_subscriber::fmt()
//!     .with_ansi(false)
//!     .with_writer(|| RedactingWriter::new(std::io::stderr()))
//!     .init();
//! ```

use std::io::{self, Write};

use brain_mcp_transport::Secrets;

/// The longest line a [`RedactingWriter`] passes on by default, after escaping.
pub const DEFAULT_LINE_LIMIT: usize = 16 * 1024;

/// A writer that hands each whole line to `inner` with every secret the process knows
/// (and any given with [`Self::with_secrets`]) removed, every character a terminal would
/// act on escaped, and the line cut to its limit. A last line without a newline is
/// written when the writer is flushed or dropped. Made once per event by a log formatter
/// (it is cheap: an empty buffer).
pub struct RedactingWriter<W: Write> {
    inner: W,
    secrets: Secrets,
    limit: usize,
    pending: Vec<u8>,
}

impl<W: Write> RedactingWriter<W> {
    /// A guard in front of `inner` that removes every secret the process knows.
    pub fn new(inner: W) -> Self {
        Self::with_secrets(inner, Secrets::none())
    }

    /// A guard that also removes `secrets` (the programs add their own).
    pub fn with_secrets(inner: W, secrets: Secrets) -> Self {
        Self {
            inner,
            secrets,
            limit: DEFAULT_LINE_LIMIT,
            pending: Vec::new(),
        }
    }

    /// This guard with lines cut to `limit` bytes.
    #[must_use]
    pub fn with_line_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Writes every whole line pending; the rest too when `all`.
    fn lines(&mut self, all: bool) -> io::Result<()> {
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.write_line(&line[..line.len() - 1])?;
        }
        if all && !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.write_line(&rest)?;
        }
        Ok(())
    }

    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let mut shown = self.secrets.shown(&text, self.limit).into_owned();
        shown.push('\n');
        self.inner.write_all(shown.as_bytes())
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.lines(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lines(true)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = self.lines(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_mcp_proto::text::Secret;

    #[test]
    fn every_known_secret_is_removed_line_by_line() {
        let _token = Secret::new("tok-GUARD-embedder-42");
        let mut out = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut out);
            write!(writer, "got tok-GUARD-").unwrap();
            write!(writer, "embedder-42 back\nsecond \u{1b}[2K line").unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "got [redacted] back\nsecond \\x1b[2K line\n");
    }

    #[test]
    fn given_secrets_and_the_line_limit_apply() {
        let mut out = Vec::new();
        {
            let secrets = Secrets::new(["short1"]);
            let mut writer = RedactingWriter::with_secrets(&mut out, secrets).with_line_limit(30);
            writeln!(writer, "a short1 b {}", "x".repeat(100)).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("a [redacted] b"), "{text}");
        assert!(text.len() < 50, "{text}");
    }
}
