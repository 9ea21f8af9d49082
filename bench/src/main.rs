//! `brain-bench`: the concurrency benchmark behind `cargo xtask bench` (docs/performance.md).
//!
//! - `brain-bench run [--quick] [--rmcp PATH] [--only TEXT] [--out FILE] [--sides a,b]
//!   [--ours-flags "..."]`: the sweep. For
//!   each case one test server; for each concurrency (1, 16, 64, 256, 1000) our client,
//!   the raw hyper floor and rmcp each make the same calls in a process of their own;
//!   then HTTPS over HTTP/1.1 (C = 16, 64) and h2 (every C), the host config load, and
//!   memory per tenant at 100,000 tenants. `BRAIN_BENCH_SIDE_PREFIX` runs each side
//!   behind a command (a profiler; see `sweep::SIDE_PREFIX_VAR`).
//! - `brain-bench side ...`: one side of one point (see `side.rs`).
//! - `brain-bench instructions [--calls N] [--only TEXT] [--concurrency C]`: instructions
//!   per call at C in flight (1 unless given), ours against the json floor, under callgrind
//!   (see `instructions.rs`).
//! - `brain-bench config-load --file F`: loads one host config and reports time and memory.
//! - `brain-bench config-gen N FILE`: writes the generated config of N bindings (to profile).
//! - `brain-bench soak [--quick] [--calls N] [--concurrency C]`: the soak (see `soak`).
//! - `brain-bench tenants [--count N] [--access-bytes B] [--refresh-bytes B]`: memory per
//!   tenant's OAuth authorizer with N tenants kept (see `tenants.rs`).

mod capture;
mod closed_loop;
mod configgen;
mod configload;
mod instructions;
mod measure;
mod ours;
mod pki;
mod plan;
mod proofs;
mod raw;
mod side;
mod soak;
mod spawn;
mod sweep;
mod table;
mod tenants;

use std::path::PathBuf;
use std::process::ExitCode;

/// Concurrency levels of the sweep.
const LEVELS: [usize; 5] = [1, 16, 64, 256, 1000];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("side") => side::run(&args[1..]),
        Some("instructions") => instructions::run(&args[1..]),
        Some("proofs") => proofs::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("soak-side") => soak::side::run(&args[1..]),
        Some("config-load") => configload::run(&args[1..]),
        Some("config-gen") => configload::generate(&args[1..]),
        Some("tenants") => tenants::run(&args[1..]),
        Some("run") | None => run(args.get(1..).unwrap_or_default()),
        Some(other) => Err(format!(
            "unknown command {other:?} (run|side|instructions|soak|soak-side|config-load|config-gen|tenants)"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("brain-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(args: &[String]) -> Result<(), String> {
    let (mut quick, mut rmcp, mut only, mut out) = (false, None, None, None);
    let (mut blocks, mut levels) = (1usize, LEVELS.to_vec());
    let mut sides = vec!["raw", "json", "ours", "rmcp"];
    let mut ours_flags = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--quick" => quick = true,
            "--rmcp" => rmcp = it.next().cloned(),
            "--only" => only = it.next().cloned(),
            "--out" => out = it.next().map(PathBuf::from),
            "--blocks" => {
                let n = it.next().ok_or("--blocks needs a value")?;
                blocks = n
                    .parse::<usize>()
                    .map_err(|e| format!("--blocks {n:?}: {e}"))?
                    .max(1);
            }
            "--levels" => {
                let list = it.next().ok_or("--levels needs a value")?;
                levels = list
                    .split(',')
                    .map(|c| {
                        c.parse::<usize>()
                            .map_err(|e| format!("--levels {c:?}: {e}"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--sides" => {
                let list = it.next().ok_or("--sides needs a value")?;
                sides.retain(|s| list.split(',').any(|l| l == *s));
            }
            "--ours-flags" => {
                let flags = it.next().ok_or("--ours-flags needs a value")?;
                ours_flags = flags.split_whitespace().map(str::to_owned).collect();
            }
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    if rmcp.is_none() {
        println!("note: no --rmcp client given; the rmcp side is skipped");
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("brain-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let setup = sweep::Setup {
        exe: exe.display().to_string(),
        rmcp,
        dir: dir.clone(),
        pki: pki::Pki::generate()?,
        ours_flags,
        sides,
        blocks,
    };
    let selected = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    println!(
        "brain-bench {}: load average {} at start; {} calls per side at C={} in {blocks} \
         alternating block(s)",
        if quick { "quick" } else { "full" },
        loadavg(),
        levels
            .iter()
            .map(|c| sweep::calls_for(*c, quick).to_string())
            .collect::<Vec<_>>()
            .join("/"),
        levels
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    );
    table::header();
    let mut points = Vec::new();
    for case in sweep::CASES.iter().filter(|c| selected(c.name)) {
        points.extend(sweep::run_case(case, &levels, quick, &setup)?);
    }
    // Over h2 one connection carries every call, so its memory per call in flight is
    // measured as over HTTP/1.1: from one call to a thousand.
    let tls_levels = |case: &sweep::Case| -> &[usize] {
        match (quick, case.is_h2()) {
            (true, _) => &[16],
            (false, true) => &levels,
            (false, false) => &[16, 64],
        }
    };
    for case in sweep::TLS_CASES.iter().filter(|c| selected(c.name)) {
        points.extend(sweep::run_case(case, tls_levels(case), quick, &setup)?);
    }
    table::summary(&points);
    if selected("config") {
        configload::measure(&setup.exe, &dir, &[1000, 10_000])?;
    }
    if selected("tenants") {
        tenants::measure(&setup.exe, 100_000)?;
    }
    println!("\nload average {} at the end", loadavg());
    if let Some(out) = out {
        let json: Vec<_> = points
            .iter()
            .map(|p| serde_json::json!({"case": p.case, "concurrency": p.concurrency, "side": p.side, "report": p.report}))
            .collect();
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
