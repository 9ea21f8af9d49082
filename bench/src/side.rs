//! `brain-bench side`: one side of one point of the sweep, in a process of its own so that
//! its CPU and memory are its own. Prints one JSON line (see `measure`).
//!
//! `brain-bench side --side ours|raw --url URL --concurrency C --calls N
//!  --era handshake|stateless [--ca PEM_FILE] [--plan FILE] [--threads T]
//!  [--pool-max-idle N] [--cleanup-opens-connections true|false]`
//!
//! The last two override our client's `ClientConfig::pool_max_idle_per_host` and
//! `cleanup_opens_connections`, to compare pool policies.

use std::sync::Arc;

use crate::measure::Run;
use crate::ours::Ours;
use crate::raw::Raw;
use crate::{closed_loop, plan};

/// The parsed flags.
struct Flags {
    side: String,
    url: String,
    concurrency: usize,
    calls: usize,
    handshake: bool,
    ca: Option<Vec<u8>>,
    plan: Option<Vec<u8>>,
    threads: usize,
    pool_max_idle: Option<usize>,
    cleanup_connects: Option<bool>,
}

fn flags(args: &[String]) -> Result<Flags, String> {
    let mut f = Flags {
        side: String::new(),
        url: String::new(),
        concurrency: 1,
        calls: 100,
        handshake: true,
        ca: None,
        plan: None,
        threads: 2,
        pool_max_idle: None,
        cleanup_connects: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        let file = || std::fs::read(value).map_err(|e| format!("{value}: {e}"));
        match flag.as_str() {
            "--side" => f.side.clone_from(value),
            "--url" => f.url.clone_from(value),
            "--concurrency" => f.concurrency = number()?.max(1),
            "--calls" => f.calls = number()?,
            "--era" => f.handshake = value == "handshake",
            "--ca" => f.ca = Some(file()?),
            "--plan" => f.plan = Some(file()?),
            "--threads" => f.threads = number()?.max(1),
            "--pool-max-idle" => f.pool_max_idle = Some(number()?),
            "--cleanup-opens-connections" => f.cleanup_connects = Some(value == "true"),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(f)
}

/// Runs the side the flags name and prints its report.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let f = flags(args)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(f.threads)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let report = match f.side.as_str() {
        "ours" => {
            let ours = Arc::new(Ours::new(&f.url, f.handshake, f.ca.as_deref(), |c| {
                if let Some(n) = f.pool_max_idle {
                    c.pool_max_idle_per_host = n;
                }
                if let Some(on) = f.cleanup_connects {
                    c.cleanup_opens_connections = on;
                }
            })?);
            rt.block_on(async {
                let run = Run::start();
                let each = ours.clone();
                let mut calls =
                    closed_loop::run(f.concurrency, f.calls, move || each.clone().call()).await;
                if !ours.finish().await {
                    calls.errors += 1;
                    calls
                        .first_error
                        .get_or_insert("background cleanup did not finish".into());
                }
                Ok::<_, String>(run.report("ours", calls))
            })?
        }
        side @ ("raw" | "json") => {
            let recorded = f
                .plan
                .as_deref()
                .ok_or("--plan is required for the raw and json sides")?;
            let steps = plan::steps(&plan::parse(recorded)?, f.handshake)?;
            let json = side == "json";
            let raw = Arc::new(Raw::new(&f.url, steps, f.ca.as_deref(), json)?);
            rt.block_on(async {
                let run = Run::start();
                let each = raw.clone();
                let calls =
                    closed_loop::run(f.concurrency, f.calls, move || each.clone().call()).await;
                raw.finish().await;
                Ok::<_, String>(run.report(side, calls))
            })?
        }
        other => return Err(format!("unknown side {other:?} (ours|raw|json)")),
    };
    println!("{report}");
    Ok(())
}
