//! `mcp-call`: run one binding of a host config from the shell and print its events.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use brain_mcp_proto::text::{json_safe, repair_lone_surrogates};
use brain_mcp_transport::Secrets;
use brain_tools_core::{
    Arguments, HostConfig, ProgressEvent, ToolCall, ToolEvent, TraceContext, run_call,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::flags::{self, FlagSpec, Parsed};
use super::logging::Logging;
use super::process::Signals;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE, ids};
use crate::{McpClient, McpExecutor, text};

/// How long the command waits for background cleanup (cancel, DELETE) before exiting.
const FLUSH_WITHIN: Duration = Duration::from_secs(5);

const SPECS: &[FlagSpec] = &[
    FlagSpec {
        name: "config",
        value: "HOST.json",
        help: "the host config holding the binding",
    },
    FlagSpec {
        name: "tool",
        value: "NAME",
        help: "the binding's name (what the model sees)",
    },
    FlagSpec {
        name: "tenant",
        value: "TENANT",
        help: "the calling session's tenant",
    },
    FlagSpec {
        name: "session",
        value: "ID",
        help: "the calling session's id (generated when absent)",
    },
    FlagSpec {
        name: "call-id",
        value: "ID",
        help: "this call's id, also the progress token (generated when absent)",
    },
    FlagSpec {
        name: "args",
        value: "JSON",
        help: "the arguments, a JSON object (default {})",
    },
    FlagSpec {
        name: "traceparent",
        value: "VALUE",
        help: "a W3C traceparent to pass on in the request's _meta (dropped, with a note, when malformed)",
    },
    FlagSpec {
        name: "tracestate",
        value: "VALUE",
        help: "a W3C tracestate to pass on with -traceparent",
    },
    FlagSpec {
        name: "v",
        value: "",
        help: "print one line per exchange to stderr (method, status, bytes, time, session, connection) and the era decision",
    },
];

const USAGE: &str = "mcp-call -config HOST.json -tool NAME -tenant TENANT [-session ID] [-call-id ID] [-args JSON] [-traceparent VALUE [-tracestate VALUE]] [-v]";
const ABOUT: &str = "Runs one tool binding through Brain's call pipeline and prints its events as JSON \
lines on stdout (tool.progress while it runs, then tool.result). Exit status: 0 when the result is \
not an error, 1 when it is, 2 when the command line or the config is invalid (nothing is sent). \
RUST_LOG (for example RUST_LOG=debug) writes the library's full trace to stderr.";

/// The `mcp-call` program: its process arguments (each must be UTF-8, else exit 2), then
/// [`main`], then exit with its code. A second stop signal exits at once.
pub fn program() -> ! {
    super::process::run("mcp-call", |args| {
        main(args, &mut std::io::stdout(), &mut std::io::stderr())
    })
}

/// Runs `mcp-call` with `args` (without the program name).
///
/// Ctrl-C, `SIGTERM` and `SIGHUP` cancel the call: the server is told (a
/// `notifications/cancelled`, or the stream closed), the session is closed, the
/// `tool.result` has kind `cancelled` and the exit status is 1.
pub fn main(args: &[String], out: &mut (dyn Write + Send), err: &mut dyn Write) -> i32 {
    let prepared = match prepare(args) {
        Ok(Some(p)) => p,
        Ok(None) => {
            let _ = write!(out, "{}", flags::help(USAGE, ABOUT, SPECS));
            return EXIT_OK;
        }
        Err(message) => {
            // Config errors come one per line (our own line breaks); each line is escaped.
            for (i, line) in message.lines().enumerate() {
                let prefix = if i == 0 { "mcp-call: " } else { "" };
                let _ = writeln!(err, "{prefix}{}", super::stderr_line(line));
            }
            return EXIT_USAGE;
        }
    };
    let runtime = match super::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "mcp-call: could not start the runtime: {e}");
            return EXIT_FAILED;
        }
    };
    if let Some(note) = &prepared.dropped_trace {
        let _ = writeln!(err, "mcp-call: {}", super::stderr_line(note));
    }
    let client = match McpClient::new() {
        Ok(client) => client,
        Err(e) => {
            let _ = writeln!(err, "mcp-call: could not set up HTTP: {e}");
            return EXIT_FAILED;
        }
    };
    client.set_allow_private_auth_destinations(prepared.config.allow_private_auth_destinations());
    if let Some(store) = prepared.config.token_store() {
        match crate::token_store_from_config(store) {
            Ok(store) => client.set_token_store(Some(store)),
            Err(e) => {
                let _ = writeln!(err, "mcp-call: {}", super::stderr_line(&e.to_string()));
                return EXIT_USAGE;
            }
        }
    }
    let logging = Logging::new("mcp-call", prepared.verbose, secrets_of(&prepared, &client));
    let code = runtime.block_on(logging.run(run(prepared, client, out, err)));
    logging.finish(err);
    super::leave(runtime);
    code
}

/// A validated command line: the config's binding and the call.
struct Prepared {
    config: HostConfig,
    tool: String,
    call: ToolCall,
    verbose: bool,
    /// Why a trace context given on the command line is not passed on.
    dropped_trace: Option<String>,
}

fn prepare(args: &[String]) -> Result<Option<Prepared>, String> {
    let flags = match flags::parse(SPECS, args).map_err(|e| e.to_string())? {
        Parsed::Help => return Ok(None),
        Parsed::Run(flags) => flags,
    };
    let config_path = flags.require("config").map_err(|e| e.to_string())?;
    let tool = flags.require("tool").map_err(|e| e.to_string())?.to_owned();
    let tenant = flags
        .require("tenant")
        .map_err(|e| e.to_string())?
        .to_owned();
    let config = HostConfig::load_path(Path::new(config_path))
        .map_err(|e| format!("invalid host config {config_path}:\n{e}"))?;
    let Some(binding) = config.get(&tool) else {
        let names = config.tools().iter().map(|b| b.name());
        let close = text::close_matches(&tool, names, None);
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!("; did you mean {}?", close.join(" or "))
        };
        return Err(format!("{config_path} has no binding named {tool:?}{hint}"));
    };
    if !binding.is_mcp() {
        return Err(format!(
            "binding {tool:?} is not an MCP binding (it has no mcp_tool); mcp-call runs MCP bindings"
        ));
    }
    let arguments = match flags.get("args") {
        Some(json) => {
            // A lone surrogate escape (text cut inside an emoji) becomes U+FFFD rather
            // than refusing the arguments. The text is sent as written otherwise, every
            // digit of every number included.
            let repaired = repair_lone_surrogates(json);
            Arguments::from_json(repaired.unwrap_or_else(|| json.to_owned()))
                .map_err(|e| format!("-args is not valid JSON: {e}"))?
        }
        None => Arguments::from(Value::Object(serde_json::Map::new())),
    };
    let mut call = ToolCall::new(
        tenant,
        flags
            .get("session")
            .map_or_else(|| ids::generate("session"), str::to_owned),
        flags
            .get("call-id")
            .map_or_else(|| ids::generate("call"), str::to_owned),
        arguments,
    );
    let (trace, dropped_trace) = trace_context(flags.get("traceparent"), flags.get("tracestate"));
    if let Some(trace) = trace {
        call = call.with_trace(trace);
    }
    Ok(Some(Prepared {
        config,
        tool,
        call,
        verbose: flags.is_set("v"),
        dropped_trace,
    }))
}

/// The trace context of `-traceparent` and `-tracestate`, and a note when some of it is
/// not passed on: a malformed value is dropped, as the W3C rules ask (a bad tracestate
/// loses only itself).
fn trace_context(
    parent: Option<&str>,
    state: Option<&str>,
) -> (Option<TraceContext>, Option<String>) {
    let Some(parent) = parent else {
        let note = state.map(|_| "-tracestate is ignored without -traceparent".to_owned());
        return (None, note);
    };
    let trace = match TraceContext::from_traceparent(parent) {
        Ok(trace) => trace,
        Err(e) => return (None, Some(format!("-traceparent is not passed on: {e}"))),
    };
    match state {
        None => (Some(trace), None),
        Some(state) => match trace.clone().with_tracestate(state) {
            Ok(with_state) => (Some(with_state), None),
            Err(e) => (
                Some(trace),
                Some(format!("-tracestate is not passed on: {e}")),
            ),
        },
    }
}

/// What the program keeps out of its logs: the binding's token or OAuth client secret,
/// the proxies' credentials. (OAuth tokens got later are removed where they are used.)
fn secrets_of(prepared: &Prepared, client: &McpClient) -> Secrets {
    let var = prepared
        .config
        .get(&prepared.tool)
        .and_then(|b| b.secret_env());
    let token = var.and_then(|var| std::env::var(var).ok());
    client.proxy_secrets().with(token)
}

async fn run(
    prepared: Prepared,
    client: McpClient,
    out: &mut (dyn Write + Send),
    err: &mut dyn Write,
) -> i32 {
    let executor = McpExecutor::new(client.clone());
    let Some(binding) = prepared.config.get(&prepared.tool) else {
        return EXIT_USAGE;
    };
    let cancel = CancellationToken::new();
    let mut signals = Signals::new();
    let out = Mutex::new(out);
    let sink = |event: ProgressEvent| print_event(&out, &ToolEvent::Progress(event));
    let call = run_call(binding, prepared.call, &executor, &sink, &cancel);
    tokio::pin!(call);
    let mut stopped = false;
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            _ = signals.next(), if !stopped => {
                stopped = true;
                cancel.cancel();
            }
        }
    };
    // After a signal, a second one exits at once while the cleanup below runs.
    let second = stopped.then(|| signals.exit_on_second("mcp-call"));
    let failed = result.is_error;
    if let Some(error) = &result.error {
        let line = format!("{}: {}", error.kind.as_str(), error.message);
        let _ = writeln!(err, "mcp-call: {}", super::stderr_line(&line));
    }
    print_event(&out, &ToolEvent::Result(result));
    if !client.flush(FLUSH_WITHIN).await {
        let _ = writeln!(
            err,
            "mcp-call: session cleanup did not finish within {FLUSH_WITHIN:?}"
        );
    }
    if let Some(watch) = second {
        watch.abort();
    }
    if failed { EXIT_FAILED } else { EXIT_OK }
}

fn print_event(out: &Mutex<&mut (dyn Write + Send)>, event: &ToolEvent) {
    let mut out = out
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Ok(line) = serde_json::to_string(event) {
        let _ = writeln!(out, "{}", json_safe(&line));
        let _ = out.flush();
    }
}
