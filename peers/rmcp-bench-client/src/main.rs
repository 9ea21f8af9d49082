//! The rmcp side of `cargo xtask bench`: CALLS tool calls at CONCURRENCY against one
//! server through rmcp's streamable HTTP client, measured by this process itself.
//!
//! usage: rmcp-bench-client --url URL --concurrency C --calls N --era handshake|stateless
//!        [--ca PEM_FILE] [--threads T]
//!
//! Handshake era: one `reqwest::Client` (pooled) shared by every call, and a fresh rmcp
//! session per call (initialize, initialized, tools/call), closed in the background as
//! Brain closes its sessions; the run waits for every close before it ends. Stateless era:
//! one rmcp client in `server/discover` mode shared by all calls, as rmcp is meant to be
//! used there. Prints one JSON line with the same fields as the project's own sides.

mod measure;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, JsonObject, ProtocolVersion};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

struct Args {
    url: String,
    concurrency: usize,
    calls: usize,
    handshake: bool,
    ca: Option<String>,
    threads: usize,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        url: String::new(),
        concurrency: 1,
        calls: 100,
        handshake: true,
        ca: None,
        threads: 2,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--url" => out.url = value.clone(),
            "--concurrency" => out.concurrency = number()?.max(1),
            "--calls" => out.calls = number()?,
            "--era" => out.handshake = value == "handshake",
            "--ca" => out.ca = Some(value.clone()),
            "--threads" => out.threads = number()?.max(1),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if out.url.is_empty() {
        return Err("--url is required".into());
    }
    Ok(out)
}

/// The shared HTTP client. reqwest's defaults pool idle connections per host without a
/// cap (rmcp's own default client turns pooling off); TLS is rustls with ring, offering
/// h2 and HTTP/1.1, trusting only the given CA.
fn http_client(ca: Option<&str>) -> Result<reqwest::Client, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    if let Some(path) = ca {
        let pem = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| e.to_string())?;
            roots.add(cert).map_err(|e| e.to_string())?;
        }
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| e.to_string())
}

fn echo() -> CallToolRequestParams {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), json!("hello from the call benchmark"));
    CallToolRequestParams::new("echo").with_arguments(arguments)
}

fn transport(
    http: &reqwest::Client,
    url: &str,
    concurrency: usize,
) -> StreamableHttpClientTransport<reqwest::Client> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(url).max_concurrent_requests(concurrency);
    StreamableHttpClientTransport::with_client(http.clone(), config)
}

/// One call's outcome: `Err` carries the message.
type Outcome = Result<(), String>;

/// Handshake era: a session per call, closed in the background (sent to `closes`).
async fn session_call(
    http: &reqwest::Client,
    url: &str,
    closes: &mpsc::UnboundedSender<RunningService<RoleClient, ()>>,
) -> Outcome {
    let service = ().serve(transport(http, url, 1)).await.map_err(|e| e.to_string())?;
    let result = service.call_tool(echo()).await;
    let _ = closes.send(service);
    result.map(drop).map_err(|e| e.to_string())
}

/// Per-task results: latencies in µs, error count, first error.
type TaskResult = (Vec<u32>, usize, Option<String>);

async fn run(a: &Args, http: reqwest::Client) -> Result<TaskResult, String> {
    let next = Arc::new(AtomicUsize::new(0));
    // Sessions end in the background: a task closes each one (DELETE) as it arrives.
    let (close_tx, mut close_rx) = mpsc::unbounded_channel::<RunningService<RoleClient, ()>>();
    let closer = tokio::spawn(async move {
        let mut closing = JoinSet::new();
        while let Some(service) = close_rx.recv().await {
            closing.spawn(async move {
                let _ = service.cancel().await;
            });
            while closing.try_join_next().is_some() {}
        }
        while closing.join_next().await.is_some() {}
    });
    let service = if a.handshake {
        None
    } else {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let service =
            ().serve_with_lifecycle(transport(&http, &a.url, a.concurrency), lifecycle)
                .await
                .map_err(|e| format!("discover: {e}"))?;
        Some(service)
    };
    let shared: Option<Peer<RoleClient>> = service.as_ref().map(|s| s.peer().clone());
    let mut tasks = JoinSet::new();
    for _ in 0..a.concurrency {
        let (next, http, url, calls) = (next.clone(), http.clone(), a.url.clone(), a.calls);
        let (closes, shared) = (close_tx.clone(), shared.clone());
        tasks.spawn(async move {
            let (mut lat, mut errors, mut first) = (Vec::new(), 0usize, None);
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                let started = Instant::now();
                let outcome = match &shared {
                    Some(peer) => peer
                        .call_tool(echo())
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    None => session_call(&http, &url, &closes).await,
                };
                lat.push(u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX));
                if let Err(e) = outcome {
                    errors += 1;
                    first.get_or_insert(e);
                }
            }
            (lat, errors, first)
        });
    }
    drop(close_tx);
    let mut all = Vec::new();
    let (mut errors, mut first) = (0, None);
    while let Some(done) = tasks.join_next().await {
        let (lat, e, f) = done.map_err(|e| e.to_string())?;
        all.extend(lat);
        errors += e;
        first = first.or(f);
    }
    drop(shared);
    if let Some(service) = service {
        let _ = service.cancel().await;
    }
    closer.await.map_err(|e| e.to_string())?;
    all.sort_unstable();
    Ok((all, errors, first))
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rmcp-bench-client: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.threads)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let http = http_client(a.ca.as_deref()).unwrap_or_else(|e| {
        eprintln!("rmcp-bench-client: HTTP client: {e}");
        std::process::exit(2);
    });
    let (base, _) = measure::rss_kib();
    let cpu0 = measure::cpu_seconds();
    let ticks0 = measure::cpu_ticks_seconds();
    let t0 = Instant::now();
    let (lat, errors, first) = match rt.block_on(run(&a, http)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rmcp-bench-client: {e}");
            std::process::exit(1);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let cpu = measure::cpu_seconds() - cpu0;
    let ticks = measure::cpu_ticks_seconds() - ticks0;
    let (rss, hwm, anon, file) = measure::memory_kib();
    println!(
        "{}",
        json!({
            "side": "rmcp", "calls": lat.len(), "errors": errors, "first_error": first,
            "wall_s": wall, "cpu_s": cpu, "cpu_ticks_s": ticks,
            "p50_us": measure::percentile(&lat, 50.0), "p99_us": measure::percentile(&lat, 99.0),
            "rss_base_kib": base, "rss_kib": rss, "rss_hwm_kib": hwm,
            "rss_anon_kib": anon, "rss_file_kib": file,
        })
    );
}
