//! `conformance-client`: the MCP client the official conformance suite drives
//! (`cargo xtask conformance` runs it; see `tests/conformance/README.md`).
//!
//! `conformance-client [ARGS...] URL`: the server URL is the last argument. The
//! scenario comes from `MCP_CONFORMANCE_SCENARIO`, the protocol version (and so the
//! lifecycle: `initialize` for 2025 revisions, stateless for 2026-07-28) from
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`, and scenario data from `MCP_CONFORMANCE_CONTEXT`.
//! It exits 0 when every step of the scenario worked, 1 otherwise (the reason on
//! standard error).

#[path = "../conformance/error.rs"]
mod error;
#[path = "../conformance/listen.rs"]
mod listen;
#[path = "../conformance/reply.rs"]
mod reply;
#[path = "../conformance/responder.rs"]
mod responder;
#[path = "../conformance/scenarios.rs"]
mod scenarios;
#[cfg(test)]
#[path = "../conformance/selftest.rs"]
mod selftest;
#[path = "../conformance/session.rs"]
mod session;
#[path = "../conformance/tools.rs"]
mod tools;

use std::process::ExitCode;

use brain_mcp_proto::version::ProtocolVersion;
use serde_json::Value;

use error::ClientError;
use scenarios::Run;

fn read_run() -> Result<Run, ClientError> {
    let url = std::env::args()
        .skip(1)
        .last()
        .ok_or_else(|| ClientError::Usage("conformance-client [ARGS...] SERVER_URL".into()))?;
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
            .map_err(|e| ClientError::Usage(format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}")))?,
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
            .map_err(|e| ClientError::Usage(format!("cannot start the runtime: {e}")))?;
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
