//! Runs one tool of an MCP server that this program starts and manages over stdio,
//! through the host facade, and prints its events as `mcp-call` does.
//!
//! ```sh
//! cargo run -q -p brain-mcp-bind --example managed_stdio -- \
//!     -tenant T -tool NAME [-args JSON] [-timeout SECONDS] -- COMMAND [ARGS...]
//! ```
//!
//! It starts COMMAND as a managed server, binds its tool NAME for tenant T, calls it once
//! and prints the events as JSON lines on stdout (`tool.progress` while it runs, then
//! `tool.result`). Exit status: 0 when the result is not an error, 1 when it is (or the
//! server could not be started), 2 when the command line is invalid or the server has no
//! such tool (nothing was called). It shuts the host down before exiting, leaving no
//! child process behind.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use brain_mcp_bind::{
    Arguments, ClientConfig, HostConfig, HostErrorKind, ManagedServer, ToolCall, ToolEvent,
    ToolHost, ToolSpec,
};
use serde_json::Value;

const USAGE: &str = "usage: managed_stdio -tenant T -tool NAME [-args JSON] [-timeout SECONDS] -- COMMAND [ARGS...]";

/// The command line, checked.
struct Args {
    tenant: String,
    tool: String,
    arguments: Arguments,
    timeout: Option<Duration>,
    command: Vec<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut tenant, mut tool, mut json, mut timeout) = (None, None, None, None);
    let mut command = Vec::new();
    while let Some(flag) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "-tenant" => tenant = Some(value("-tenant")?),
            "-tool" => tool = Some(value("-tool")?),
            "-args" => json = Some(value("-args")?),
            "-timeout" => {
                let text = value("-timeout")?;
                let seconds: u64 = text
                    .parse()
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or(format!("-timeout must be 1 to 86400 seconds, not {text:?}"))?;
                timeout = Some(Duration::from_secs(seconds));
            }
            "--" => {
                command = args.by_ref().collect();
                break;
            }
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let arguments = match json {
        Some(text) => Arguments::from_json(text).map_err(|e| format!("-args is not JSON: {e}"))?,
        None => Arguments::from(Value::Object(serde_json::Map::new())),
    };
    if command.is_empty() {
        return Err("no COMMAND after --".into());
    }
    Ok(Args {
        tenant: tenant.ok_or("-tenant is required")?,
        tool: tool.ok_or("-tool is required")?,
        arguments,
        timeout,
        command,
    })
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("managed_stdio: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("managed_stdio: could not start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    ExitCode::from(runtime.block_on(run(args)))
}

async fn run(args: Args) -> u8 {
    let config = match HostConfig::from_value(&serde_json::json!({"tools": []})) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("managed_stdio: {e}");
            return 1;
        }
    };
    let host = match ToolHost::new(config, ClientConfig::default()) {
        Ok(host) => host,
        Err(e) => {
            eprintln!("managed_stdio: {e}");
            return 1;
        }
    };
    let (program, rest) = args.command.split_at(1);
    let mut tool = ToolSpec::new(&args.tool, [args.tenant.as_str()]);
    if let Some(timeout) = args.timeout {
        tool = tool.timeout(timeout);
    }
    // One child per call is all this program needs: no pool kept warm.
    let server = ManagedServer::stdio("command", &program[0])
        .args(rest)
        .pool_size(0)
        .tool(tool);
    let name = match host.add_server(server).await {
        Ok(names) => names.into_iter().next().unwrap_or_default(),
        Err(e) => {
            eprintln!("managed_stdio: {}", one_line(&e.to_string()));
            host.shutdown(Duration::from_secs(5)).await;
            return match e.kind() {
                HostErrorKind::Server
                | HostErrorKind::Unreachable
                | HostErrorKind::Refused
                | HostErrorKind::Client => 1,
                _ => 2,
            };
        }
    };
    let call = ToolCall::new(args.tenant, "managed-stdio", "call-1", args.arguments);
    let mut handle = host.call(&name, call);
    let mut code = 1;
    let mut out = std::io::stdout().lock();
    while let Some(event) = handle.next().await {
        if let ToolEvent::Result(result) = &event {
            code = u8::from(result.is_error);
            if let Some(error) = &result.error {
                eprintln!(
                    "managed_stdio: {}: {}",
                    error.kind.as_str(),
                    one_line(&error.message)
                );
            }
        }
        if let Ok(line) = serde_json::to_string(&event) {
            let _ = writeln!(out, "{}", brain_mcp_bind::json_safe(&line));
            let _ = out.flush();
        }
    }
    if !host.shutdown(Duration::from_secs(5)).await {
        eprintln!("managed_stdio: cleanup did not finish within 5 s");
    }
    code
}

/// `text` as one terminal-safe line.
fn one_line(text: &str) -> String {
    brain_mcp_bind::terminal_safe(text).into_owned()
}
