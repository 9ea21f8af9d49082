//! How a Rust service embeds the tool layer: one [`ToolHost`] over a host config file,
//! the tools a tenant may use (what the model is shown), and one call with its events,
//! its own deadline and Ctrl-C as cancellation.
//!
//! ```sh
//! cargo run -q -p brain-mcp-bind --example embed -- HOST.json TENANT [TOOL [ARGS_JSON]]
//! ```
//!
//! It prints one JSON line with the tenant's tools (`name`, `description`,
//! `input_schema`), then, when TOOL is given, the call's events as JSON lines. Exit
//! status: 0, or 1 when the result is an error, or 2 when the command line or the
//! config is invalid.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use brain_mcp_bind::{
    Arguments, CancellationToken, ClientConfig, HostConfig, ToolCall, ToolEvent, ToolHost,
};
use serde_json::json;

/// The longest this service lets one call take, whatever the binding allows.
const CALL_DEADLINE: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, tenant, rest @ ..] = args.as_slice() else {
        eprintln!("usage: embed HOST.json TENANT [TOOL [ARGS_JSON]]");
        return ExitCode::from(2);
    };
    let config = match HostConfig::load_path(path.as_ref()) {
        Ok(config) => config,
        Err(errors) => {
            eprintln!("embed: invalid host config {path}:\n{errors}");
            return ExitCode::from(2);
        }
    };
    // The model's text as it wrote it: its numbers reach the server digit for digit.
    let arguments = match rest.get(1).map(|a| Arguments::from_json(a.as_str())) {
        None => Arguments::from(json!({})),
        Some(Ok(arguments)) => arguments,
        Some(Err(e)) => {
            eprintln!("embed: ARGS_JSON is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        eprintln!("embed: could not start the runtime");
        return ExitCode::from(1);
    };
    let code = runtime.block_on(async {
        // One host per process: Send + Sync and cheap to clone, shared by every session.
        let host = match ToolHost::new(config, ClientConfig::default()) {
            Ok(host) => Arc::new(host),
            Err(e) => {
                eprintln!("embed: {e}");
                return 1;
            }
        };
        // What the model is shown for this tenant.
        println!("{}", json!({"tools": host.tools_for(tenant)}));
        let code = match rest.first() {
            Some(tool) => call(&host, tenant, tool, arguments).await,
            None => 0,
        };
        // Waits for session cleanup (DELETEs, cancel notices) before the process exits.
        host.shutdown(Duration::from_secs(5)).await;
        code
    });
    ExitCode::from(code)
}

/// Runs one call, printing its events; Ctrl-C cancels it.
async fn call(host: &ToolHost, tenant: &str, tool: &str, arguments: Arguments) -> u8 {
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    let interrupt = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let call =
        ToolCall::new(tenant, "embed-session", "embed-call", arguments).with_timeout(CALL_DEADLINE);
    let mut handle = host.call_with(tool, call, cancel);
    let mut code = 1;
    while let Some(event) = handle.next().await {
        if let ToolEvent::Result(result) = &event {
            code = u8::from(result.is_error);
        }
        if let Ok(line) = serde_json::to_string(&event) {
            println!("{}", brain_mcp_bind::json_safe(&line));
        }
    }
    if handle.dropped_progress() > 0 {
        eprintln!(
            "embed: {} progress events were dropped",
            handle.dropped_progress()
        );
    }
    interrupt.abort();
    code
}
