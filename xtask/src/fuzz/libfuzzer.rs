//! Running one libFuzzer binary for a fixed time and reading its statistics back from its
//! log: executions, coverage, features and corpus size at the start and at the end.

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Longest a single input may run before libFuzzer reports it as a hang.
const INPUT_TIMEOUT_SECONDS: u32 = 10;
/// Log lines shown when a target fails.
const TAIL_LINES: usize = 30;

/// What one run of one target reported.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Inputs executed.
    pub(crate) runs: Option<u64>,
    /// Average executions per second.
    pub(crate) exec_per_sec: Option<u64>,
    /// Coverage (instrumented edges hit) once the corpus was loaded, and at the end.
    pub(crate) cov: (Option<u64>, Option<u64>),
    /// Features (libFuzzer's finer coverage signal), at the start and at the end.
    pub(crate) features: (Option<u64>, Option<u64>),
    /// Corpus entries at the start and at the end.
    pub(crate) corpus: (Option<u64>, Option<u64>),
    /// The corpus size at the end, as libFuzzer prints it (such as `312Kb`).
    pub(crate) corpus_size: Option<String>,
    /// Peak resident memory in MB.
    pub(crate) peak_rss_mb: Option<u64>,
}

/// A finished run: the summary, where the log is, and the crash input if there was one.
pub(crate) struct Outcome {
    /// The statistics.
    pub(crate) summary: Summary,
    /// libFuzzer's full output.
    pub(crate) log: PathBuf,
    /// `None` when the run ended cleanly; otherwise what went wrong.
    pub(crate) failure: Option<String>,
}

/// Runs `binary` for `seconds` on the corpus in `corpus`, writing crash inputs under
/// `artifacts` and the output to `log`.
pub(crate) fn run(
    binary: &Path,
    seconds: u64,
    corpus: &Path,
    artifacts: &Path,
    log: &Path,
) -> Result<Outcome, String> {
    for dir in [corpus, artifacts] {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let out = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot reopen {}: {e}", log.display()))?;
    let mut prefix = artifacts.as_os_str().to_owned();
    prefix.push("/");
    let mut artifact_prefix = std::ffi::OsString::from("-artifact_prefix=");
    artifact_prefix.push(prefix);
    let started = Instant::now();
    let status = Command::new(binary)
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
        .arg("-print_final_stats=1")
        .arg(artifact_prefix)
        .arg(corpus)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    eprintln!("    ({:.1}s)", started.elapsed().as_secs_f64());
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let failure = (!status.success()).then(|| failure(&text, &status.to_string()));
    Ok(Outcome {
        summary: parse(&text),
        log: log.to_owned(),
        failure,
    })
}

/// The crash input's path (if libFuzzer wrote one) and the end of the log.
fn failure(log: &str, status: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    let written = lines
        .iter()
        .find_map(|line| {
            line.split_once("Test unit written to ")
                .map(|(_, p)| p.trim())
        })
        .map_or_else(String::new, |path| format!("; input saved as {path}"));
    format!("exited with {status}{written}\n{tail}")
}

/// Reads the statistics out of a libFuzzer log.
pub(crate) fn parse(log: &str) -> Summary {
    let mut summary = Summary::default();
    for line in log.lines() {
        if line.contains(" INITED ") || line.contains("\tINITED ") {
            summary.cov.0 = number(line, "cov:");
            summary.features.0 = number(line, "ft:");
            summary.corpus.0 = corpus_units(line);
        }
        if line.contains("cov:") && line.starts_with('#') {
            summary.cov.1 = number(line, "cov:").or(summary.cov.1);
            summary.features.1 = number(line, "ft:").or(summary.features.1);
            summary.corpus.1 = corpus_units(line).or(summary.corpus.1);
            summary.corpus_size = value(line, "corp:")
                .and_then(|c| c.split_once('/'))
                .map(|(_, size)| size.to_owned())
                .or(summary.corpus_size.take());
        }
        if let Some(rest) = line.strip_prefix("stat::") {
            let (key, number) = rest.split_once(':').unwrap_or((rest, ""));
            let number = number.trim().parse().ok();
            match key {
                "number_of_executed_units" => summary.runs = number,
                "average_exec_per_sec" => summary.exec_per_sec = number,
                "peak_rss_mb" => summary.peak_rss_mb = number,
                _ => {}
            }
        }
    }
    summary
}

/// The token after `key` on a status line.
fn value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut tokens = line.split_whitespace();
    tokens.find(|token| *token == key)?;
    tokens.next()
}

fn number(line: &str, key: &str) -> Option<u64> {
    value(line, key)?.parse().ok()
}

/// The entry count of `corp: <entries>/<size>`.
fn corpus_units(line: &str) -> Option<u64> {
    value(line, "corp:")?.split('/').next()?.parse().ok()
}

/// A Markdown table row: target, executions, exec/s, coverage, features, corpus, peak RSS.
pub(crate) struct Row<'a>(pub(crate) &'a str, pub(crate) &'a Summary);

/// The header line of [`Row`]'s table.
pub(crate) const TABLE_HEADER: &str = "| target | runs | exec/s | cov (start → end) | \
    features (start → end) | corpus (start → end) | peak RSS |\n\
    | --- | ---: | ---: | --- | --- | --- | ---: |";

impl fmt::Display for Row<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Row(target, s) = self;
        let n = |v: Option<u64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
        let size = s
            .corpus_size
            .as_deref()
            .map_or_else(String::new, |size| format!(" ({size})"));
        write!(
            f,
            "| {target} | {} | {} | {} → {} | {} → {} | {} → {}{size} | {} MB |",
            n(s.runs),
            n(s.exec_per_sec),
            n(s.cov.0),
            n(s.cov.1),
            n(s.features.0),
            n(s.features.1),
            n(s.corpus.0),
            n(s.corpus.1),
            n(s.peak_rss_mb),
        )
    }
}
