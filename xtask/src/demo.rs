//! `cargo xtask demo`: the main job end to end on the bundled demo server.
//!
//! Starts `brain-demo-server` on a free port (once per protocol era), discovers its tools
//! with `mcp-tools`, writes a host config from the printed bindings, and calls tools with
//! `mcp-call`, showing the events each call prints.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::cmd;

/// The calls the demo makes: binding name, tenant, arguments, and what to expect.
const CALLS: &[(&str, &str, &str, &str)] = &[
    (
        "echo",
        "demo",
        r#"{"text":"hello from Brain"}"#,
        "a text result",
    ),
    (
        "progress",
        "demo",
        r#"{"steps":3,"delay_ms":150}"#,
        "live progress events, then the result",
    ),
    ("image", "demo", "{}", "an image block (base64 PNG)"),
    (
        "structured",
        "demo",
        r#"{"a":2,"b":3}"#,
        "structured content plus its JSON as text",
    ),
    (
        "fail",
        "demo",
        "{}",
        "the tool's own error (is_error, unknown_outcome false)",
    ),
    (
        "echo",
        "someone-else",
        r#"{"text":"hi"}"#,
        "refused: tenant not allowed, nothing sent",
    ),
    (
        "structured",
        "demo",
        r#"{"a":"two"}"#,
        "refused: invalid arguments, nothing sent",
    ),
];

/// Runs the demo.
pub(crate) fn run() -> Result<(), String> {
    let cargo = cmd::cargo();
    cmd::run(
        &cargo,
        &[
            "build",
            "--locked",
            "-q",
            "-p",
            "brain-tests",
            "--bin",
            "brain-demo-server",
            "-p",
            "brain-mcp-bind",
            "--bins",
        ],
        &[],
    )?;
    let bin = target_dir().join("debug");
    let work = target_dir().join("demo");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    for era in ["stateless", "handshake"] {
        println!("\n### Demo server speaking the {era} protocol era\n");
        let mut server = DemoServer::start(&bin, era)?;
        let url = server.url.clone();
        println!("$ mcp-tools -url {url} -tenant demo -tools echo,progress,image,structured,fail");
        let discovered = Command::new(bin.join("mcp-tools"))
            .args([
                "-url",
                &url,
                "-tenant",
                "demo",
                "-tools",
                "echo,progress,image,structured,fail",
            ])
            .output()
            .map_err(|e| format!("cannot run mcp-tools: {e}"))?;
        if !discovered.status.success() {
            return Err(format!(
                "mcp-tools failed: {}",
                String::from_utf8_lossy(&discovered.stderr)
            ));
        }
        let bindings = String::from_utf8_lossy(&discovered.stdout).into_owned();
        let shown: String = bindings
            .lines()
            .take(14)
            .map(|l| format!("{l}\n"))
            .collect();
        println!("{shown}  ... (bindings for every named tool)\n");
        let config = work.join(format!("host-{era}.json"));
        std::fs::write(&config, format!("{{\"tools\": {bindings}}}"))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        println!("wrote {}\n", config.display());
        for (tool, tenant, args, expect) in CALLS {
            println!(
                "$ mcp-call -config {} -tool {tool} -tenant {tenant} -args '{args}'   # {expect}",
                config.display()
            );
            let status = Command::new(bin.join("mcp-call"))
                .args([
                    "-config",
                    &config.to_string_lossy(),
                    "-tool",
                    tool,
                    "-tenant",
                    tenant,
                    "-args",
                    args,
                ])
                .stderr(Stdio::null())
                .status()
                .map_err(|e| format!("cannot run mcp-call: {e}"))?;
            println!("(exit {})\n", status.code().unwrap_or(-1));
        }
        server.stop();
    }
    println!("demo finished: discovery, calls in both protocol eras, and refusals before sending");
    Ok(())
}

/// The target directory cargo builds into.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cmd::project_root().join("target"))
}

/// A running demo server; killed on drop.
struct DemoServer {
    child: Child,
    url: String,
}

impl DemoServer {
    fn start(bin: &std::path::Path, era: &str) -> Result<Self, String> {
        let mut child = Command::new(bin.join("brain-demo-server"))
            .args(["--era", era])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start brain-demo-server: {e}"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from brain-demo-server")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("cannot read brain-demo-server's address: {e}"))?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("unexpected first line from brain-demo-server: {line:?}"))?
            .to_owned();
        Ok(Self { child, url })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        self.stop();
    }
}
