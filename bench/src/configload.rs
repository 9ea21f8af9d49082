//! The host config load: how long a config of 1k and 10k bindings takes to load and how
//! much memory the loaded config holds, each load in a process of its own.
//!
//! `brain-bench config-load --file F` loads `F` and prints one JSON line: the time,
//! resident memory before and after (the text is read inside the measured load), and
//! the peak.

use std::path::Path;
use std::time::{Duration, Instant};

use brain_tools_core::HostConfig;
use serde_json::json;

use crate::measure::{cpu_seconds, rss_kib};
use crate::spawn;

/// Loads the config at `--file` and prints its report.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let [flag, file] = args else {
        return Err("usage: brain-bench config-load --file F".into());
    };
    if flag != "--file" {
        return Err(format!("unknown flag {flag}"));
    }
    let (base, base_hwm) = rss_kib();
    let cpu = cpu_seconds();
    let started = Instant::now();
    let config = HostConfig::load_path(Path::new(file)).map_err(|e| e.to_string())?;
    let load = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let (after, hwm) = rss_kib();
    println!(
        "{}",
        json!({"bindings": config.tools().len(), "load_s": load, "cpu_s": cpu, "rss_base_kib": base,
               "rss_base_hwm_kib": base_hwm, "rss_kib": after, "rss_hwm_kib": hwm})
    );
    drop(config);
    Ok(())
}

/// `config-gen N FILE`: writes the generated config of N bindings.
pub(crate) fn generate(args: &[String]) -> Result<(), String> {
    let [n, file] = args else {
        return Err("usage: brain-bench config-gen N FILE".into());
    };
    let n: usize = n.parse().map_err(|e| format!("{n}: {e}"))?;
    std::fs::write(file, crate::configgen::host_config(n)).map_err(|e| format!("{file}: {e}"))
}

/// Generates and loads configs of each size; prints a line per size.
pub(crate) fn measure(exe: &str, dir: &Path, sizes: &[usize]) -> Result<(), String> {
    println!(
        "\nhost config load (each in a fresh process; wall and CPU time of HostConfig::load_path; held = RSS after load - before, peak = peak RSS - before):"
    );
    for &n in sizes {
        let text = crate::configgen::host_config(n);
        let path = dir.join(format!("host-{n}.json"));
        std::fs::write(&path, &text).map_err(|e| e.to_string())?;
        let args = [
            "config-load".to_owned(),
            "--file".to_owned(),
            path.display().to_string(),
        ];
        match spawn::side(exe, &args, Duration::from_secs(120)) {
            Ok(r) => {
                let kib = |k: &str| r.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
                println!(
                    "CONFIG {n:>6} bindings ({:.1} MiB of JSON): load {:.3} s (CPU {:.3} s), held {:.1} MiB, peak {:.1} MiB",
                    text.len() as f64 / 1048576.0,
                    kib("load_s"),
                    kib("cpu_s"),
                    (kib("rss_kib") - kib("rss_base_kib")) / 1024.0,
                    (kib("rss_hwm_kib") - kib("rss_base_kib")) / 1024.0,
                );
            }
            Err(e) => println!("CONFIG {n:>6} bindings: FAILED {e}"),
        }
    }
    Ok(())
}
