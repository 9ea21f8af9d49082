//! `brain-bench instructions [--calls N] [--only TEXT] [--concurrency C]`: instructions
//! per call at C calls in flight (1 unless given), our client against the `json` floor,
//! counted by callgrind. Comparing C = 16 with C = 1 shows work that grows with
//! concurrency (wake-ups, polls, shared state), though not contention: callgrind runs one
//! thread at a time.
//!
//! Instructions are the steady measure on a shared machine: they do not move with the
//! load of other processes. For each JSON case (handshake and stateless era) one test
//! server is started; each side runs in its own process under `valgrind --tool=callgrind`
//! on one worker thread, once with N calls and once with 2N, and the difference divided
//! by N is the cost of one call with start-up and teardown taken out. Prints one
//! `INSTRUCTIONS case=.. ours=.. json=.. ratio=..` line per case.

use std::path::Path;
use std::process::Command;

use crate::sweep::{self, Case};

/// The cases measured: JSON replies in both eras.
fn cases() -> [Case; 2] {
    [sweep::CASES[0], sweep::CASES[2]]
}

/// Runs the measurement and prints one line per case.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let (mut calls, mut only, mut concurrency) = (400usize, None::<String>, 1usize);
    if args.first().is_some_and(|a| a == "--dpop") {
        return dpop(&args[1..]);
    }
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--calls" => calls = value.parse().map_err(|e| format!("--calls: {e}"))?,
            "--only" => only = Some(value.clone()),
            "--concurrency" => {
                concurrency = value.parse().map_err(|e| format!("--concurrency: {e}"))?;
            }
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let concurrency = concurrency.max(1);
    let calls = calls.max(concurrency);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("brain-instructions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for case in cases() {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let plan = dir.join(format!("{}.plan", case.name));
        sweep::record_plan(&case, &plan)?;
        let server = sweep::start(&case, None)?;
        let mut per_call = Vec::new();
        for side in ["ours", "json"] {
            let side_args = |n: usize| {
                let mut a: Vec<String> = ["side", "--side", side, "--plan"]
                    .map(str::to_owned)
                    .to_vec();
                a.push(plan.display().to_string());
                a.extend([
                    "--url".into(),
                    server.url(),
                    "--era".into(),
                    case.era_flag().into(),
                ]);
                a.extend(["--concurrency".to_owned(), concurrency.to_string()]);
                a.extend(["--threads", "1", "--calls"].map(str::to_owned));
                a.push(n.to_string());
                a
            };
            let out = dir.join(format!("{}-{side}.callgrind", case.name));
            let once = counted(&exe, &side_args(calls), &out)?;
            let twice = counted(&exe, &side_args(2 * calls), &out)?;
            per_call.push(twice.saturating_sub(once) / calls as u64);
        }
        let (ours, json) = (per_call[0], per_call[1].max(1));
        println!(
            "INSTRUCTIONS case={} ours={ours} json={json} ratio={:.2} c={concurrency}",
            case.name,
            ours as f64 / json as f64
        );
    }
    // Kept for reading (callgrind_annotate) when asked.
    if std::env::var_os(KEEP_VAR).is_some() {
        println!("callgrind outputs kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// Set, the callgrind outputs of the last (2N-call) run of each side are kept.
const KEEP_VAR: &str = "BRAIN_BENCH_KEEP_CALLGRIND";

/// `--dpop [--calls N]`: the instructions one DPoP proof costs (`brain-bench proofs`, N
/// and 2N proofs under callgrind), and what that adds to a call of each era: one proof
/// per request to the MCP server (four in the handshake era, counting the session's
/// `DELETE`; one in the 2026 era). Prints `INSTRUCTIONS case=dpop-proof per_proof=..`.
fn dpop(args: &[String]) -> Result<(), String> {
    let calls = match args {
        [flag, n] if flag == "--calls" => n.parse().map_err(|e| format!("--calls: {e}"))?,
        [] => 400usize,
        _ => return Err("usage: instructions --dpop [--calls N]".into()),
    };
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::env::temp_dir().join(format!("brain-proofs-{}.callgrind", std::process::id()));
    let proofs = |n: usize| ["proofs".to_owned(), "--count".to_owned(), n.to_string()];
    let once = counted(&exe, &proofs(calls), &out)?;
    let twice = counted(&exe, &proofs(2 * calls), &out)?;
    let _ = std::fs::remove_file(&out);
    let per_proof = twice.saturating_sub(once) / calls as u64;
    println!(
        "INSTRUCTIONS case=dpop-proof per_proof={per_proof} handshake_call={} stateless_call={per_proof}",
        4 * per_proof
    );
    Ok(())
}

/// The instructions `exe args` executes under callgrind (its whole process).
fn counted(exe: &Path, args: &[String], out: &Path) -> Result<u64, String> {
    let status = Command::new("valgrind")
        .args(["--tool=callgrind", "--quiet"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run valgrind (is it installed?): {e}"))?;
    if !status.success() {
        return Err(format!("the side under callgrind failed: {status}"));
    }
    let text = std::fs::read_to_string(out).map_err(|e| e.to_string())?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no instruction total in {}", out.display()))
}
