//! stdio against real `python3` child processes.

use std::time::{Duration, Instant};

use brain_mcp_transport::stdio::{StdioConfig, StdioError, StdioProcess};

/// Echoes each request as a response, after printing a banner (not JSON-RPC) to stdout
/// and a log line to stderr. `big` answers with one line of 100 000 bytes first.
const ECHO: &str = r#"
import json, os, sys
print("server starting...", flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    sys.stderr.write("got %s\n" % msg.get("method"))
    sys.stderr.flush()
    if msg.get("method") == "big":
        print("x" * 100000, flush=True)
    if "id" in msg:
        out = {"jsonrpc": "2.0", "id": msg["id"],
               "result": {"echo": msg.get("params"), "env": os.environ.get("BRAIN_T")}}
        print(json.dumps(out), flush=True)
"#;

fn echo() -> StdioProcess {
    let mut cfg = StdioConfig::new("python3")
        .args(["-u", "-c", ECHO])
        .env("BRAIN_T", "yes");
    cfg.max_line = 10_000;
    cfg.stderr_limit = 64;
    StdioProcess::spawn(cfg).expect("python3 must be installed for the stdio tests")
}

async fn recv(p: &mut StdioProcess) -> String {
    let received = tokio::time::timeout(Duration::from_secs(10), p.recv())
        .await
        .expect("reply in time")
        .expect("not EOF")
        .expect("a line");
    crate::text(&received.message)
}

#[tokio::test]
async fn requests_are_echoed_and_non_json_lines_skipped() {
    let mut p = echo();
    for id in 1..=3 {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{{"n":{id}}}}}"#);
        p.send(msg.as_bytes()).await.unwrap();
        let line = recv(&mut p).await;
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], id);
        assert_eq!(v["result"]["echo"]["n"], id);
        assert_eq!(v["result"]["env"], "yes");
    }
    assert_eq!(p.skipped_lines(), 1, "the banner");
    // A notification gets no reply, and closing stdin ends the child cleanly.
    p.send(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#)
        .await
        .unwrap();
    let status = p.close().await.unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn stderr_is_kept_bounded() {
    let mut p = echo();
    for id in 1..=20 {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"method-{id}"}}"#);
        p.send(msg.as_bytes()).await.unwrap();
        recv(&mut p).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let tail = p.stderr_tail();
    assert!(tail.len() <= 64, "{tail:?}");
    assert!(tail.ends_with("got method-20\n"), "{tail:?}");
}

#[tokio::test]
async fn an_over_long_line_is_an_error_and_the_stream_recovers() {
    let mut p = echo();
    p.send(br#"{"jsonrpc":"2.0","id":1,"method":"big"}"#)
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), p.recv())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(Err(StdioError::LineTooLong { limit: 10_000 }))),
        "{first:?}"
    );
    let line = recv(&mut p).await;
    assert!(line.contains(r#""id":1"#), "{line}");
}

#[tokio::test]
async fn messages_must_be_one_line() {
    let mut p = echo();
    let err = p.send(b"{\n}").await.unwrap_err();
    assert!(matches!(err, StdioError::MessageHasNewline));
}

#[tokio::test]
async fn close_kills_a_child_that_ignores_stdin_closing() {
    let mut cfg = StdioConfig::new("python3").args([
        "-c",
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)",
    ]);
    cfg.close_grace = Duration::from_millis(300);
    let p = StdioProcess::spawn(cfg).unwrap();
    let started = Instant::now();
    let status = p.close().await.unwrap();
    assert!(!status.success());
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn dropping_the_process_kills_the_child() {
    let p = StdioProcess::spawn(
        StdioConfig::new("python3").args(["-c", "import time; time.sleep(60)"]),
    )
    .unwrap();
    let pid = p.id().unwrap();
    drop(p);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        // Gone, or a zombie waiting to be reaped: either way no longer running.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        if stat.is_empty() || state == Some('Z') {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "child {pid} still running: {stat}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_missing_program_fails_to_spawn() {
    let err = StdioProcess::spawn(StdioConfig::new("/nonexistent/brain-mcp-server")).unwrap_err();
    assert!(matches!(err, StdioError::Spawn { .. }));
    assert!(err.to_string().contains("brain-mcp-server"));
}

#[tokio::test]
async fn a_taken_sender_writes_from_another_task_and_closes_stdin_when_dropped() {
    let mut p = echo();
    let mut sender = p.take_sender().expect("the sender is there once");
    assert!(p.take_sender().is_none(), "and only once");
    assert!(matches!(p.send(b"{}").await, Err(StdioError::Closed)));
    let stderr = p.stderr_handle();
    let writer = tokio::spawn(async move {
        sender
            .send(br#"{"jsonrpc":"2.0","id":7,"method":"m","params":{}}"#)
            .await
            .unwrap();
        assert!(matches!(
            sender.send(b"two\nlines").await,
            Err(StdioError::MessageHasNewline)
        ));
        sender
    });
    let line = recv(&mut p).await;
    assert!(
        line.contains("\"id\":7") || line.contains("\"id\": 7"),
        "{line}"
    );
    // Dropping the sender closes stdin: the child sees EOF and exits on its own.
    drop(writer.await.unwrap());
    let end = tokio::time::timeout(Duration::from_secs(10), p.recv())
        .await
        .expect("EOF in time");
    assert!(end.is_none(), "stdout closes after stdin does");
    // The stderr handle still reads after the process is gone.
    let status = p.close().await.unwrap();
    assert!(status.success());
    assert!(stderr.text().contains("got m"), "{}", stderr.text());
}

/// Whether process `pid` runs (a zombie waiting to be reaped counts as gone).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// A wrapper shell that starts a hung grandchild (its pid written to a file), then
/// `then`: `wait` (the wrapper hangs too) or `exit` (it leaves the grandchild behind).
fn wrapped(then: &str) -> (StdioProcess, u32) {
    let file = std::env::temp_dir().join(format!(
        "brain-group-{}-{}-{}",
        std::process::id(),
        then.replace(' ', "_"),
        rand_suffix()
    ));
    let script = format!("sleep 300 & echo $! > {}; {then}", file.display());
    let mut cfg = StdioConfig::new("sh").args(["-c", &script]);
    cfg.close_grace = Duration::from_millis(300);
    let p = StdioProcess::spawn(cfg).expect("sh runs");
    let until = Instant::now() + Duration::from_secs(5);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            Instant::now() < until,
            "the wrapper never started its grandchild"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = std::fs::remove_file(&file);
    assert!(running(pid));
    (p, pid)
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

async fn gone_within(pid: u32, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !running(pid)
}

#[tokio::test]
async fn closing_a_wrapped_child_ends_its_whole_tree() {
    // The wrapper hangs on its grandchild: neither survives the close.
    let (p, grandchild) = wrapped("wait");
    let _ = p.close().await;
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "the grandchild survived close"
    );
    // The wrapper exits at once, leaving its grandchild behind: the group still ends.
    let (p, grandchild) = wrapped("exit 0");
    let _ = p.close().await;
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "the orphan survived close"
    );
}

#[tokio::test]
async fn dropping_a_wrapped_child_ends_its_whole_tree() {
    let (p, grandchild) = wrapped("wait");
    drop(p);
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "the grandchild survived drop"
    );
}
