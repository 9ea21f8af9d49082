//! `conformance-client`: the client the official MCP conformance suite drives
//! (`cargo xtask conformance`; see `tests/conformance/README.md`).
//!
//! It is a scenario runner, nothing more: it lists tools with Brain's discovery and calls
//! them through Brain's pipeline and `McpExecutor`, the path every Brain tool call takes.
//! Every protocol decision is the client core's. The only thing added is a stand-in user
//! (a [`Responder`](brain_mcp_bind::Responder) that accepts forms with their defaults) for
//! the scenarios that ask for user input.
//!
//! `conformance-client [ARGS...] URL`: the server URL is the last argument; the scenario,
//! the protocol version and the scenario's data come from `MCP_CONFORMANCE_SCENARIO`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and `MCP_CONFORMANCE_CONTEXT`. Exit 0 when every step
//! worked, 1 otherwise (the reason on standard error).

mod arguments;
mod auth;
mod scenarios;
#[cfg(test)]
mod selftest;
mod user;

use std::process::ExitCode;

use brain_mcp_proto::version::ProtocolVersion;
use serde_json::Value;

use scenarios::Run;

fn read_run() -> Result<Run, String> {
    let url = std::env::args()
        .skip(1)
        .last()
        .ok_or("usage: conformance-client [ARGS...] SERVER_URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let version = if version.is_empty() {
        ProtocolVersion::LATEST_HANDSHAKE
    } else {
        // "draft" and later revisions run the newest lifecycle we know.
        ProtocolVersion::parse(&version).unwrap_or(ProtocolVersion::LATEST)
    };
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
        Err(_) => Value::Null,
    };
    Ok(Run {
        scenario,
        version,
        context,
        url,
    })
}

fn main() -> ExitCode {
    let outcome = read_run().and_then(|run| {
        eprintln!(
            "conformance-client: scenario {:?} at {} against {}",
            run.scenario, run.version, run.url
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        rt.block_on(scenarios::run(&run))
    });
    match outcome {
        Ok(()) => {
            eprintln!("conformance-client: done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}
