//! `mcp-tools`: discover a server's tools and print Brain bindings for the named ones.

use std::io::Write;
use std::time::Duration;

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use brain_mcp_proto::text::json_safe;
use brain_tools_core::EndpointUrl;

use super::flags::{self, FlagSpec, Parsed};
use crate::McpClient;
use crate::discover::{self, DEFAULT_DEADLINE, Request};

const SPECS: &[FlagSpec] = &[
    FlagSpec {
        name: "url",
        value: "URL",
        help: "the server's Streamable HTTP endpoint",
    },
    FlagSpec {
        name: "token-env",
        value: "NAME",
        help: "environment variable holding the server's API key; used to connect and written into the bindings",
    },
    FlagSpec {
        name: "tenant",
        value: "TENANT",
        help: "the tenant allowed to use the tools",
    },
    FlagSpec {
        name: "tools",
        value: "a,b,c",
        help: "comma-separated remote tool names to include (1 to 128)",
    },
    FlagSpec {
        name: "timeout",
        value: "SECONDS",
        help: "bound on the whole discovery (default 30)",
    },
];

const USAGE: &str =
    "mcp-tools -url URL [-token-env NAME] -tenant TENANT -tools a,b,c [-timeout SECONDS]";
const ABOUT: &str = "Connects to an MCP server (either protocol era), reads its whole tool list and prints \
a JSON array with one Brain tool binding per named tool, in the order named. Review the output, then \
copy it into the tools array of the host config. Exit status: 0 on success, 1 when discovery fails, \
2 when the command line is invalid.";

/// Runs `mcp-tools` with `args` (without the program name).
pub fn main(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let request = match prepare(args) {
        Ok(Some(r)) => r,
        Ok(None) => {
            let _ = write!(out, "{}", flags::help(USAGE, ABOUT, SPECS));
            return EXIT_OK;
        }
        Err(message) => {
            let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&message));
            return EXIT_USAGE;
        }
    };
    if let Err(e) = discover::check(&request) {
        let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&e.to_string()));
        return EXIT_FAILED;
    }
    let runtime = match super::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "mcp-tools: could not start the runtime: {e}");
            return EXIT_FAILED;
        }
    };
    let code = runtime.block_on(async {
        let client = match McpClient::new() {
            Ok(client) => client,
            Err(e) => {
                let _ = writeln!(err, "mcp-tools: could not set up HTTP: {e}");
                return EXIT_FAILED;
            }
        };
        let outcome = discover::discover(&client, &request).await;
        client.flush(Duration::from_secs(5)).await;
        match outcome {
            Ok(found) => {
                for warning in &found.warnings {
                    let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(warning));
                }
                let _ = writeln!(out, "{}", json_safe(&found.json));
                EXIT_OK
            }
            Err(e) => {
                let _ = writeln!(err, "mcp-tools: {}", super::stderr_line(&e.to_string()));
                EXIT_FAILED
            }
        }
    });
    super::leave(runtime);
    code
}

fn prepare(args: &[String]) -> Result<Option<Request>, String> {
    let flags = match flags::parse(SPECS, args).map_err(|e| e.to_string())? {
        Parsed::Help => return Ok(None),
        Parsed::Run(flags) => flags,
    };
    let url = flags.require("url").map_err(|e| e.to_string())?.to_owned();
    // The rule the host config applies, checked before anything is sent.
    EndpointUrl::parse(&url).map_err(|reason| format!("-url: the URL {reason}"))?;
    let tenant = flags
        .require("tenant")
        .map_err(|e| e.to_string())?
        .to_owned();
    let list = flags.require("tools").map_err(|e| e.to_string())?;
    // `-tools ""` names no tool (not one empty name); `a,,b` still names an empty one.
    let tools = if list.trim().is_empty() {
        Vec::new()
    } else {
        list.split(',').map(|s| s.trim().to_owned()).collect()
    };
    let deadline = match flags.get("timeout") {
        None => DEFAULT_DEADLINE,
        Some(s) => match s.parse::<f64>() {
            Ok(secs) if secs > 0.0 && secs <= 3600.0 => Duration::from_secs_f64(secs),
            _ => {
                return Err(format!(
                    "-timeout {s:?} is not a number of seconds between 0 and 3600"
                ));
            }
        },
    };
    Ok(Some(Request {
        url,
        token_env: flags.get("token-env").map(str::to_owned),
        tenant,
        tools,
        deadline,
    }))
}
