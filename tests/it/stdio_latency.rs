//! What the pool buys: the latency of a managed stdio tool call (the Python SDK server's
//! `echo`) with a pool of ready children, without one, and on a 2026-era shared child.
//! The figures in `docs/performance.md` come from this test
//! (`cargo test -p brain-tests --test it stdio_latency -- --nocapture`).

use std::time::{Duration, Instant};

use brain_mcp_bind::{Era, ToolHost, ToolSpec};
use serde_json::json;

use crate::stdio_support::{TENANT, call, host, python};

const CALLS: usize = 5;

/// Median wall time of [`CALLS`] sequential calls, `pause` apart (room for the pool to
/// refill, as between a session's tool calls).
async fn median(host: &ToolHost, label: &str, pause: Duration) -> Duration {
    let mut times = Vec::new();
    for i in 0..CALLS {
        tokio::time::sleep(pause).await;
        let start = Instant::now();
        let out = call(host, "echo", &format!("{label}-{i}"), json!({"text": "x"})).await;
        times.push(start.elapsed());
        assert_eq!(out.result["is_error"], false, "{}", out.result);
    }
    times.sort();
    times[CALLS / 2]
}

async fn added(label: &str, era: Option<Era>, pool: usize) -> ToolHost {
    let host = host();
    let mut server = python(label)
        .pool_size(pool)
        .tool(ToolSpec::new("echo", [TENANT]));
    if let Some(era) = era {
        server = server.era(era);
    }
    host.add_server(server).await.expect("loads");
    host
}

#[tokio::test]
async fn a_pool_of_ready_children_takes_the_start_off_the_call() {
    let pooled = added("latency-pooled", Some(Era::Handshake), 2).await;
    let with_pool = median(&pooled, "pooled", Duration::from_secs(3)).await;
    let cold = added("latency-cold", Some(Era::Handshake), 0).await;
    let without_pool = median(&cold, "cold", Duration::from_millis(200)).await;
    let shared = added("latency-shared", None, 2).await;
    let one_child = median(&shared, "shared", Duration::from_millis(200)).await;
    eprintln!(
        "LATENCY handshake+pool={with_pool:?} handshake-no-pool={without_pool:?} \
         2026-shared-child={one_child:?} no-pool/pool={:.1} pool/shared={:.1}",
        without_pool.as_secs_f64() / with_pool.as_secs_f64(),
        with_pool.as_secs_f64() / one_child.as_secs_f64(),
    );
    assert!(
        with_pool * 3 < without_pool,
        "the pool should hide the start: {with_pool:?} against {without_pool:?}"
    );
    for host in [pooled, cold, shared] {
        assert!(host.shutdown(Duration::from_secs(10)).await);
    }
}
