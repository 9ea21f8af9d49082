//! `cargo xtask interop`: `mcp-tools` then `mcp-call` against real MCP servers, in each
//! era they speak, and `docs/interop.md` from the outcomes.
//!
//! Steps: install the peers (`peers/install.sh all`), build the two binaries, start every
//! peer, put a recording proxy in front of each server × era (it also hides the 2026 probe
//! for the handshake rows of dual-era servers), discover every tool with `mcp-tools`, write
//! its output unchanged into a host config per row (`target/interop/host-SERVER-ERA.json`),
//! call every tool with `mcp-call`, and compare each outcome with the expectation in
//! [`cases`]. The report is written either way;
//! the command fails on any difference (outcome or era).

mod cases;
mod peer;
mod proxy;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use cases::{Row, rows};
use peer::Kind;
use proxy::Proxy;

/// The tenant of every interop binding.
const TENANT: &str = "interop";
/// Bound on one `mcp-tools` run (its own discovery bound is 30 s).
const DISCOVERY_LIMIT: Duration = Duration::from_secs(60);
/// Bound on one `mcp-call` run (the printed bindings allow 300 s; nothing here needs 60).
const CALL_LIMIT: Duration = Duration::from_secs(60);

/// One call's result, for the report.
struct Outcome {
    row: usize,
    tool: &'static str,
    expect: &'static str,
    got: String,
    note: &'static str,
}

/// Runs the whole interop check.
pub(crate) fn run() -> Result<(), String> {
    let started = Instant::now();
    let cargo = crate::cmd::cargo();
    crate::cmd::run("bash", &["peers/install.sh", "all"], &[])?;
    crate::cmd::run(&cargo, &["build", "-p", "brain-mcp-bind", "--bins"], &[])?;
    let bins = target_dir().join("debug");
    let work = target_dir().join("interop");
    let logs = work.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("creating {}: {e}", logs.display()))?;

    let rows = rows();
    let mut problems = uncovered_tools(&rows);
    let mut peers = Vec::new();
    for kind in [Kind::Everything, Kind::Python, Kind::Rmcp] {
        eprintln!("==> starting peer {}", kind.name());
        peers.push((kind, peer::start(kind, &logs)?));
    }
    let mut proxies = Vec::new();
    let mut configs = Vec::new();
    for row in &rows {
        let Some((_, server)) = peers.iter().find(|(k, _)| *k == row.kind) else {
            return Err(format!("peer {} was not started", row.kind.name()));
        };
        let hide = row.era == cases::EraChoice::ForcedHandshake;
        let proxy =
            Proxy::start(server.addr, hide).map_err(|e| format!("starting a proxy: {e}"))?;
        eprintln!(
            "==> mcp-tools: {} ({}) via {}",
            row.kind.name(),
            row.era.expected(),
            proxy.url()
        );
        let config = work.join(format!("host-{}-{}.json", row.kind.name(), row.era.slug()));
        match discover(&bins, row, &proxy.url(), &config) {
            Ok(()) => {}
            Err(e) => problems.push(format!(
                "{} ({}): discovery failed: {e} (peer log: {})",
                row.kind.name(),
                row.era.expected(),
                server.log.display()
            )),
        }
        proxies.push(proxy);
        configs.push(config);
    }

    let mut outcomes = Vec::new();
    for (i, (row, config)) in rows.iter().zip(&configs).enumerate() {
        for case in &row.cases {
            let got = call(&bins, config, case.tool, case.args);
            eprintln!(
                "    {} ({}) {}: {got}",
                row.kind.name(),
                row.era.expected(),
                case.tool
            );
            outcomes.push(Outcome {
                row: i,
                tool: case.tool,
                expect: case.expect,
                got,
                note: case.note,
            });
        }
    }
    let mut eras = Vec::new();
    for (row, proxy) in rows.iter().zip(&proxies) {
        let seen = spoken_era(&proxy.seen());
        if seen != row.era.expected() {
            problems.push(format!(
                "{}: expected the {} era, the traffic shows {seen}",
                row.kind.name(),
                row.era.expected()
            ));
        }
        eras.push(seen);
    }
    for o in &outcomes {
        if o.got != o.expect {
            let row = &rows[o.row];
            problems.push(format!(
                "{} ({}) {}: expected {}, got {}",
                row.kind.name(),
                row.era.expected(),
                o.tool,
                o.expect,
                o.got
            ));
        }
    }
    drop(peers);
    let report = report(&rows, &eras, &outcomes);
    let path = crate::cmd::project_root().join("docs/interop.md");
    std::fs::write(&path, report).map_err(|e| format!("writing {}: {e}", path.display()))?;
    eprintln!(
        "xtask interop: {} calls, {} problems, {:.0} s; wrote {}",
        outcomes.len(),
        problems.len(),
        started.elapsed().as_secs_f64(),
        path.display()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("interop differences:\n  {}", problems.join("\n  ")))
    }
}

/// Tools a peer lists (in its captured `tools/list`, the pinned version's) that a row of it
/// does not call, and tools a row calls that the peer does not list.
fn uncovered_tools(rows: &[Row]) -> Vec<String> {
    let fixtures = crate::cmd::project_root().join("crates/brain-mcp-proto/tests/fixtures");
    let mut problems = Vec::new();
    for row in rows {
        let file = match row.kind {
            Kind::Everything => "everything/tools-list.jsonl",
            Kind::Python => "python/tools-list-paginated.jsonl",
            Kind::Rmcp => "rmcp/tools-list.jsonl",
        };
        let listed = match listed_tools(&fixtures.join(file)) {
            Ok(listed) => listed,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let called: Vec<&str> = row.cases.iter().map(|c| c.tool).collect();
        for name in &listed {
            if !called.contains(&name.as_str()) {
                problems.push(format!(
                    "{} ({}): the server lists {name}, which has no case",
                    row.kind.name(),
                    row.era.expected()
                ));
            }
        }
        for name in called {
            if !listed.iter().any(|l| l == name) {
                problems.push(format!(
                    "{} ({}): {name} has a case but is not in {file}",
                    row.kind.name(),
                    row.era.expected()
                ));
            }
        }
    }
    problems
}

/// The tool names in a captured exchange (every received `tools/list` page).
fn listed_tools(path: &Path) -> Result<Vec<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut names = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line)
            .map_err(|e| format!("{}: not a fixture line: {e}", path.display()))?;
        if entry["dir"] != "recv" {
            continue;
        }
        if let Some(tools) = entry["message"]["result"]["tools"].as_array() {
            names.extend(
                tools
                    .iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned)),
            );
        }
    }
    Ok(names)
}

/// The cargo target directory (`CARGO_TARGET_DIR`, relative to the root, or `target`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => crate::cmd::project_root().join(dir),
        None => crate::cmd::project_root().join("target"),
    }
}

/// Runs `mcp-tools` for every tool of `row` and writes its output, unchanged, as the
/// `tools` of the host config at `config`.
fn discover(bins: &Path, row: &Row, url: &str, config: &Path) -> Result<(), String> {
    let tools: Vec<&str> = row.cases.iter().map(|c| c.tool).collect();
    let mut cmd = Command::new(bins.join("mcp-tools"));
    cmd.args(["-url", url, "-tenant", TENANT, "-tools", &tools.join(",")]);
    let out = peer::run_bounded(cmd, DISCOVERY_LIMIT)?;
    if out.status.is_none_or(|s| !s.success()) {
        return Err(format!(
            "mcp-tools {}: {}",
            out.status
                .map_or("was killed at its bound".into(), |s| s.to_string()),
            out.stderr.trim()
        ));
    }
    let bindings: Vec<Value> = serde_json::from_str(&out.stdout)
        .map_err(|e| format!("mcp-tools printed no JSON array: {e}"))?;
    let names: Vec<&str> = bindings.iter().filter_map(|b| b["name"].as_str()).collect();
    if names != tools {
        return Err(format!("bindings for {names:?}, asked for {tools:?}"));
    }
    let document = format!("{{\"tools\": {}}}\n", out.stdout.trim_end());
    std::fs::write(config, document).map_err(|e| format!("writing {}: {e}", config.display()))
}

/// Runs one `mcp-call` and names its outcome: `success`, `tool_error`, the failure kind,
/// or `harness: …` when the command itself misbehaved.
fn call(bins: &Path, config: &Path, tool: &str, args: &str) -> String {
    let mut cmd = Command::new(bins.join("mcp-call"));
    cmd.arg("-config")
        .arg(config)
        .args(["-tool", tool, "-tenant", TENANT, "-args", args]);
    let out = match peer::run_bounded(cmd, CALL_LIMIT) {
        Ok(out) => out,
        Err(e) => return format!("harness: {e}"),
    };
    let Some(status) = out.status else {
        return "harness: mcp-call was killed at its bound".into();
    };
    let last = out.stdout.lines().rev().find(|l| !l.trim().is_empty());
    let Some(result) = last.and_then(|l| serde_json::from_str::<Value>(l).ok()) else {
        return format!(
            "harness: no result ({status}): {}",
            out.stderr.lines().last().unwrap_or("")
        );
    };
    if result["type"] != "tool.result" {
        return "harness: the last line is not a tool.result".into();
    }
    let outcome = match (&result["is_error"], result["error"]["kind"].as_str()) {
        (Value::Bool(false), _) => "success".to_owned(),
        (_, Some(kind)) => kind.to_owned(),
        _ => "tool_error".to_owned(),
    };
    if status.success() != (outcome == "success") {
        return format!("harness: exit {status} does not match {outcome}");
    }
    outcome
}

/// The era the traffic through a proxy shows: `handshake` when sessions were opened and no
/// request carried a 2026 version, the 2026 version when nothing used the handshake.
fn spoken_era(seen: &[proxy::Seen]) -> String {
    let handshake = seen.iter().any(|s| s.method == "initialize");
    let modern: Vec<&str> = seen
        .iter()
        .filter(|s| s.method.starts_with("tools/"))
        .filter_map(|s| s.protocol_version.as_deref())
        .filter(|v| v.starts_with("2026"))
        .collect();
    match (handshake, modern.first()) {
        (true, None) => "handshake".into(),
        (false, Some(v)) if modern.iter().all(|m| m == v) => (*v).to_owned(),
        (false, None) => "nothing".into(),
        _ => "a mix of eras".into(),
    }
}

/// `docs/interop.md`.
fn report(rows: &[Row], eras: &[String], outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Interoperability with real MCP servers\n");
    // Nothing here changes from run to run unless an outcome or a version does, so the
    // test command leaves a checkout as it found it; when a page changed is in git.
    let _ = writeln!(
        s,
        "Generated by `cargo xtask interop`; do not edit by hand.\n"
    );
    let _ = writeln!(
        s,
        "For each server and era, `mcp-tools` discovered every tool listed below, its output \
         became the `tools` of a host config unchanged, and `mcp-call` called each tool once \
         through that config. The outcome is \
         `success`, `tool_error` (the tool ran and set `isError`), or the `error.kind` of a \
         Brain failure. The command fails when an outcome or the era spoken differs from \
         the expectation kept in `xtask/src/interop/cases.rs`.\n"
    );
    let _ = writeln!(s, "## Versions\n");
    let _ = writeln!(s, "| component | version |\n|---|---|");
    let _ = writeln!(
        s,
        "| Brain (`mcp-tools`, `mcp-call`) | {} |",
        env!("CARGO_PKG_VERSION")
    );
    for (what, version) in versions() {
        let _ = writeln!(s, "| {what} | {version} |");
    }
    let _ = writeln!(s, "\n## Eras\n");
    let _ = writeln!(
        s,
        "The era is the one the client learned by itself (a `server/discover` probe), except \
         for the rows marked *forced*: there a proxy answers the probe with \"method not \
         found\", as a handshake-only server would, so the client falls back to `initialize` \
         against a server that also speaks 2026-07-28. The era column is what the recorded \
         traffic shows.\n"
    );
    let _ = writeln!(s, "## Outcomes\n");
    let _ = writeln!(
        s,
        "| server | era | tool | outcome | expected | note |\n|---|---|---|---|---|---|"
    );
    for o in outcomes {
        let row = &rows[o.row];
        let forced = if row.era == cases::EraChoice::ForcedHandshake {
            " (forced)"
        } else {
            ""
        };
        let mark = if o.got == o.expect {
            ""
        } else {
            " **DIFFERS**"
        };
        let _ = writeln!(
            s,
            "| {} | {}{forced} | `{}` | {}{mark} | {} | {} |",
            row.kind.name(),
            eras.get(o.row).map_or("?", String::as_str),
            o.tool,
            o.got.replace('|', "/"),
            o.expect,
            o.note
        );
    }
    s
}

/// Pinned peer versions (from the installer and manifests) and the runtimes used.
fn versions() -> Vec<(&'static str, String)> {
    let root = crate::cmd::project_root();
    let install = std::fs::read_to_string(root.join("peers/install.sh")).unwrap_or_default();
    let pin = |var: &str| {
        install
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{var}=\"")))
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or("?")
            .to_owned()
    };
    let manifest =
        std::fs::read_to_string(root.join("peers/rmcp-server/Cargo.toml")).unwrap_or_default();
    let rmcp = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rmcp = { version = \"="))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("?")
        .to_owned();
    let tool_version = |program: PathBuf| {
        Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .map(|o| {
                let text = String::from_utf8_lossy(&o.stdout).trim().to_owned();
                if text.is_empty() {
                    String::from_utf8_lossy(&o.stderr).trim().to_owned()
                } else {
                    text
                }
            })
            .unwrap_or_else(|| "?".into())
    };
    vec![
        (
            "everything: npm `@modelcontextprotocol/server-everything`",
            pin("EVERYTHING_VERSION"),
        ),
        ("python: PyPI `mcp`", pin("PYTHON_MCP_VERSION")),
        ("rmcp: crate `rmcp`", rmcp),
        (
            "Node (runs everything)",
            tool_version(PathBuf::from("node")),
        ),
        (
            "Python (runs the python peer)",
            tool_version(peer::peers_dir().join("python-venv/bin/python")),
        ),
    ]
}
