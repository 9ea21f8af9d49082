//! Starting one side as a child process and reading its JSON line, bounded in time; and
//! the test server's own CPU time, read from its thread in this process.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs `program args`, waits at most `limit`, and parses the last line it printed.
pub(crate) fn side(program: &str, args: &[String], limit: Duration) -> Result<Value, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let tail = |s: &str| s.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
    match status {
        None => Err(format!(
            "{program} did not finish within {limit:?}: {}",
            tail(&err)
        )),
        Some(s) if !s.success() => Err(format!("{program} failed ({s}): {}", tail(&err))),
        Some(_) => {
            let line = out
                .lines()
                .rev()
                .find(|l| l.starts_with('{'))
                .unwrap_or_default();
            serde_json::from_str(line)
                .map_err(|e| format!("{program} printed no report ({e}): {}", tail(&err)))
        }
    }
}

/// CPU nanoseconds spent so far by the test server's threads in this process.
pub(crate) fn server_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        let dir = task.path();
        // Thread names are cut to 15 bytes: "mcp-test-server-PORT" reads "mcp-test-server".
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.starts_with("mcp-test-server") {
            total += std::fs::read_to_string(dir.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}
