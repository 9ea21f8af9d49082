//! What the programs write to stderr about what they do: `-v` gives one line per exchange
//! and per era or session event; `RUST_LOG` gives `tracing-subscriber`'s full output under
//! its filter. stdout is never touched.
//!
//! Lines go to stderr as they happen when the command runs as its own program, and are
//! kept and written to the command's error stream at the end when it runs inside another
//! program (tests), since a shared stderr cannot be borrowed by background tasks.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::instrument::WithSubscriber;
use tracing::{Dispatch, Event, Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use brain_mcp_transport::Secrets;
use brain_mcp_transport::observe::EXCHANGE_TARGET;

use crate::RedactingWriter;
use crate::observe::MCP_TARGET;

/// Where log lines go.
#[derive(Clone)]
enum Sink {
    /// Straight to the process's stderr.
    Live,
    /// Kept, for the command's own error stream at the end.
    Kept(Arc<Mutex<Vec<u8>>>),
}

impl Sink {
    fn write_raw(&self, bytes: &[u8]) {
        match self {
            Self::Live => {
                let _ = std::io::stderr().write_all(bytes);
            }
            Self::Kept(buffer) => {
                let mut buffer = buffer.lock().unwrap_or_else(PoisonError::into_inner);
                buffer.extend_from_slice(bytes);
            }
        }
    }
}

/// The longest line written to stderr, after escaping (a trace line holds a body of at
/// most 2 KiB, escaped, plus its fields).
const LINE_LIMIT: usize = 16 * 1024;

/// The one last step of every line the programs log, whatever wrote it (our `-v` layer,
/// `tracing-subscriber`'s formatter with any library's events under `RUST_LOG`): every
/// secret the program knows removed, every character a terminal would act on escaped, and
/// the line bounded. The libraries already do this for what they emit; this catches what
/// another crate's events or a future field would otherwise let through.
#[derive(Clone)]
struct Guard {
    sink: Sink,
    secrets: Secrets,
}

impl Guard {
    fn write_line(&self, line: &str, limit: usize) {
        let mut shown = self.secrets.shown(line, limit).into_owned();
        shown.push('\n');
        self.sink.write_raw(shown.as_bytes());
    }
}

/// The sink as a writer, for the [`RedactingWriter`] in front of `tracing-subscriber`'s
/// formatter (the formatter writes one event per writer, then drops it).
struct SinkWriter(Sink);

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_raw(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A command's logging: what it runs its work under, and what is left to write at the end.
pub(crate) struct Logging {
    dispatch: Option<Dispatch>,
    sink: Sink,
}

impl Logging {
    /// Logging for `program`: `-v` lines when `verbose`, and `RUST_LOG`'s output when that
    /// variable is set (and valid); none otherwise. `secrets` (the token, the proxies'
    /// credentials) are removed from every line, whatever wrote it.
    pub(crate) fn new(program: &'static str, verbose: bool, secrets: Secrets) -> Self {
        let sink = if super::process::own_process() {
            Sink::Live
        } else {
            Sink::Kept(Arc::default())
        };
        let env = std::env::var("RUST_LOG")
            .ok()
            .and_then(|v| EnvFilter::try_new(v).ok());
        if !verbose && env.is_none() {
            return Self {
                dispatch: None,
                sink,
            };
        }
        let guard = Guard {
            sink: sink.clone(),
            secrets,
        };
        let verbose_layer = verbose.then(|| {
            let targets = Targets::new()
                .with_target(EXCHANGE_TARGET, Level::DEBUG)
                .with_target(MCP_TARGET, Level::DEBUG)
                .with_default(Level::WARN);
            Verbose {
                program,
                guard: guard.clone(),
            }
            .with_filter(targets)
        });
        let fmt_layer = env.map(|filter| {
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || {
                    RedactingWriter::with_secrets(
                        SinkWriter(guard.sink.clone()),
                        guard.secrets.clone(),
                    )
                    .with_line_limit(LINE_LIMIT)
                })
                .with_filter(filter)
        });
        let subscriber = tracing_subscriber::registry()
            .with(verbose_layer)
            .with(fmt_layer);
        anchor();
        Self {
            dispatch: Some(Dispatch::new(subscriber)),
            sink,
        }
    }

    /// Runs `work` with this logging (the client's background cleanup follows it).
    pub(crate) async fn run<F: Future>(&self, work: F) -> F::Output {
        match &self.dispatch {
            Some(dispatch) => work.with_subscriber(dispatch.clone()).await,
            None => work.await,
        }
    }

    /// Writes the lines kept (when not written live) to `err`.
    pub(crate) fn finish(&self, err: &mut dyn Write) {
        if let Sink::Kept(buffer) = &self.sink {
            let buffer = buffer.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = err.write_all(&buffer);
        }
    }
}

/// Registers, once per process, a dispatcher that lives as long as the process. With a
/// single scoped dispatcher registered, tracing-core decides the interest of a callsite
/// first reached while it lives from the default of the thread that reached it: one
/// reached outside this logging's scope (another thread's work, a task spawned without
/// it) would be silenced for good, and `-v` would miss its lines. With two registered it
/// asks every live dispatcher instead.
fn anchor() {
    static ANCHOR: std::sync::OnceLock<Dispatch> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| Dispatch::new(tracing::subscriber::NoSubscriber::default()));
}

/// The `-v` layer: one short line per exchange, era decision and session event.
struct Verbose {
    program: &'static str,
    guard: Guard,
}

/// The fields of an event or span, as text.
#[derive(Default)]
struct Fields(Vec<(&'static str, String)>);

impl Fields {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
}

impl<S> Layer<S> for Verbose
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        if attrs.metadata().name() != "mcp_exchange" {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let line = if meta.target() == EXCHANGE_TARGET {
            let exchange = ctx.event_scope(event).and_then(|scope| {
                scope
                    .into_iter()
                    .find_map(|span| span.extensions().get::<Fields>().map(|f| f.0.clone()))
            });
            exchange_line(&fields, &Fields(exchange.unwrap_or_default()))
        } else if meta.target() == MCP_TARGET || *meta.level() <= Level::WARN {
            event_line(&fields)
        } else {
            return;
        };
        if let Some(line) = line {
            let line = format!("{}: {line}", self.program);
            self.guard.write_line(&line, super::STDERR_LINE_LIMIT);
        }
    }
}

/// `tools/call POST -> 200 text/event-stream, 812 B, 34 ms, session 3f2a9c1b…, connection 2 reused`
fn exchange_line(event: &Fields, span: &Fields) -> Option<String> {
    if event.get("message") != Some("exchange") {
        return None;
    }
    let mut line = String::new();
    if let Some(method) = span.get("method") {
        let _ = write!(line, "{method} ");
    }
    let _ = write!(line, "{}", event.get("http_method").unwrap_or("?"));
    match event.get("status") {
        Some(status) => {
            let _ = write!(line, " -> {status}");
        }
        None => line.push_str(" -> no answer"),
    }
    if let Some(kind) = event.get("content_type") {
        let _ = write!(line, " {kind}");
    }
    let _ = write!(
        line,
        ", {} B, {} ms",
        event.get("bytes").unwrap_or("0"),
        event.get("duration_ms").unwrap_or("?")
    );
    if let Some(session) = span.get("mcp.session.id") {
        let _ = write!(line, ", session {session}");
    }
    if let Some(id) = event.get("connection") {
        let how = if event.get("reused") == Some("true") {
            "reused"
        } else {
            "new"
        };
        let _ = write!(line, ", connection {id} {how}");
    }
    if event.get("resent") == Some("true") {
        line.push_str(", resent after a stale connection");
    }
    if let Some(hops) = event.get("redirects").filter(|h| *h != "0") {
        let _ = write!(line, ", {hops} redirect(s)");
    }
    match event.get("outcome") {
        Some("ok" | "accepted") | None => {}
        Some(outcome) => {
            let _ = write!(line, " ({outcome})");
        }
    }
    Some(line)
}

/// An era, session or warning event, on one line.
fn event_line(event: &Fields) -> Option<String> {
    let message = event.get("message")?;
    let field = |name: &str| event.get(name).unwrap_or("?");
    let line = match message {
        "era" => {
            let how = match event.get("source") {
                Some("probe") => "learned with server/discover",
                _ => "known from an earlier exchange",
            };
            format!("era {} for {} ({how})", field("era"), field("server"))
        }
        "session opened" => format!("session {} opened", field("mcp.session.id")),
        "session closed" => format!(
            "session {} closed (DELETE answered {})",
            field("mcp.session.id"),
            field("status")
        ),
        _ => {
            let rest: Vec<String> = event
                .0
                .iter()
                .filter(|(name, _)| *name != "message")
                .map(|(name, value)| format!("{name} {value}"))
                .collect();
            if rest.is_empty() {
                message.to_owned()
            } else {
                format!("{message} ({})", rest.join(", "))
            }
        }
    };
    Some(line)
}
