//! `brain-demo-server`: the bundled demo MCP server.
//!
//! `brain-demo-server [--port P] [--era both|handshake|stateless] [--sse]` prints
//! `listening on http://127.0.0.1:P/mcp` on stdout, then serves until it is killed or its
//! standard input is closed (an input that is `/dev/null` from the start is not watched).

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use brain_tests::server::{Era, Reply, ServerConfig, TestServer};

const USAGE: &str =
    "usage: brain-demo-server [--port P] [--era both|handshake|stateless] [--sse] [--faults]";

fn parse(args: &[String]) -> Result<ServerConfig, String> {
    let mut config = ServerConfig {
        fault_tools: false,
        ..ServerConfig::default()
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.trim_start_matches('-') {
            "port" => {
                let v = value()?;
                config.port = v.parse().map_err(|_| format!("bad port {v:?}"))?;
            }
            "era" => {
                config.era = match value()?.as_str() {
                    "both" => Era::Both,
                    "handshake" => Era::Handshake,
                    "stateless" => Era::Stateless,
                    other => return Err(format!("unknown era {other:?}")),
                }
            }
            "sse" => config.reply = Reply::Sse,
            "faults" => config.fault_tools = true,
            "h" | "help" => return Err(String::new()),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(config)
}

/// Whether standard input is `/dev/null`, which reads as closed from the start.
fn stdin_is_null() -> bool {
    std::fs::read_link("/proc/self/fd/0").is_ok_and(|p| p.as_os_str() == "/dev/null")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match parse(&args) {
        Ok(c) => c,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("brain-demo-server: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match TestServer::try_start(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("brain-demo-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on {}", server.url());
    let _ = stdout.flush();
    if stdin_is_null() {
        loop {
            std::thread::park();
        }
    }
    let mut sink = [0u8; 1024];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    drop(server);
    ExitCode::SUCCESS
}
