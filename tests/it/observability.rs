//! Metrics of calls, sessions, connections and bytes, counted with a test recorder
//! (docs/observability.md). The tracing side has a test binary of its own
//! (`tests/observe`), since `tracing` caches per-callsite interest process-wide.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use brain_mcp_bind::{ManagedServer, ToolSpec};
use brain_tests::peers::Peer;
use brain_tests::server::{Era, ServerConfig, TestServer};
use brain_tools_core::{NoProgress, ToolCall};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::call_support::{Harness, TENANT, binding, call_elicit_with, spec};

/// Counters and histograms by name and labels (a histogram counts its records), and the
/// largest value each histogram recorded.
#[derive(Default, Clone)]
struct Recorded(
    Arc<Mutex<BTreeMap<String, u64>>>,
    Arc<Mutex<BTreeMap<String, f64>>>,
);

impl Recorded {
    fn key(key: &metrics::Key) -> String {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        format!("{}{{{}}}", key.name(), labels.join(","))
    }

    /// The sum over every series of metric `name` whose labels include all of `labels`
    /// (`key=value`) and none of `absent` (label names).
    fn sum(&self, name: &str, labels: &[&str], absent: &[&str]) -> u64 {
        let recorded = self.0.lock().expect("metrics");
        recorded
            .iter()
            .filter(|(key, _)| in_series(key, name, labels, absent))
            .map(|(_, n)| *n)
            .sum()
    }

    /// The largest value recorded by any series of histogram `name` with all of `labels`.
    fn largest(&self, name: &str, labels: &[&str]) -> f64 {
        let largest = self.1.lock().expect("metrics");
        largest
            .iter()
            .filter(|(key, _)| in_series(key, name, labels, &[]))
            .map(|(_, v)| *v)
            .fold(0.0, f64::max)
    }

    fn get(&self, key: &str) -> u64 {
        self.0
            .lock()
            .expect("metrics")
            .get(key)
            .copied()
            .unwrap_or(0)
    }
}

/// Whether `key` (as [`Recorded::key`] writes it) is a series of metric `name` whose
/// labels include all of `labels` (`key=value`) and none of `absent` (label names).
fn in_series(key: &str, name: &str, labels: &[&str], absent: &[&str]) -> bool {
    let Some(rest) = key.strip_prefix(name).and_then(|r| r.strip_prefix('{')) else {
        return false;
    };
    let have: Vec<&str> = rest.trim_end_matches('}').split(',').collect();
    labels.iter().all(|l| have.contains(l))
        && absent
            .iter()
            .all(|a| !have.iter().any(|h| h.starts_with(&format!("{a}="))))
}

struct Count(String, Recorded);

impl metrics::CounterFn for Count {
    fn increment(&self, value: u64) {
        *self
            .1
            .0
            .lock()
            .expect("metrics")
            .entry(self.0.clone())
            .or_default() += value;
    }

    fn absolute(&self, value: u64) {
        self.1
            .0
            .lock()
            .expect("metrics")
            .insert(self.0.clone(), value);
    }
}

impl metrics::HistogramFn for Count {
    fn record(&self, value: f64) {
        let mut largest = self.1.1.lock().expect("metrics");
        let top = largest.entry(self.0.clone()).or_default();
        *top = top.max(value);
        drop(largest);
        *self
            .1
            .0
            .lock()
            .expect("metrics")
            .entry(self.0.clone())
            .or_default() += 1;
    }
}

impl metrics::Recorder for Recorded {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }

    fn register_counter(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::from_arc(Arc::new(Count(Self::key(key), self.clone())))
    }

    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }

    fn register_histogram(
        &self,
        key: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        metrics::Histogram::from_arc(Arc::new(Count(Self::key(key), self.clone())))
    }
}

/// What `work` recorded, run on a runtime of this thread (the recorder is the thread's).
fn recording(work: impl Future<Output = ()>) -> Recorded {
    let recorded = Recorded::default();
    metrics::with_local_recorder(&recorded, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(work);
    });
    recorded
}

#[test]
fn calls_sessions_connections_and_bytes_are_counted() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let recorded = recording(async {
        {
            let h = Harness::new();
            let echo = binding(spec("echo", &server.url(), "echo"));
            let fail = binding(spec("fail", &server.url(), "fail"));
            let none = NoProgress;
            for (b, id) in [(&echo, "m-1"), (&echo, "m-2"), (&fail, "m-3")] {
                let call = ToolCall::new(TENANT, "s", id, json!({"text": "x"}));
                let cancel = CancellationToken::new();
                brain_tools_core::run_call(b, call, &h.executor, &none, &cancel).await;
            }
            let refused = ToolCall::new("someone-else", "s", "m-4", json!({}));
            brain_tools_core::run_call(
                &echo,
                refused,
                &h.executor,
                &none,
                &CancellationToken::new(),
            )
            .await;
            h.flush().await;
        }
    });
    assert_eq!(
        recorded.get("brain_tool_calls_total{tool=echo,outcome=ok}"),
        2
    );
    assert_eq!(
        recorded.get("brain_tool_calls_total{tool=fail,outcome=tool_error}"),
        1
    );
    assert_eq!(
        recorded.get("brain_tool_calls_total{tool=echo,outcome=tenant_not_allowed}"),
        1
    );
    assert_eq!(
        recorded.get("brain_tool_call_failures_total{kind=tenant_not_allowed}"),
        1
    );
    assert_eq!(
        recorded.get("brain_tool_call_duration_seconds{tool=echo}"),
        3
    );
    assert_eq!(recorded.get("brain_mcp_sessions_opened_total{}"), 3);
    // OpenTelemetry's MCP histograms: one session per call, ended cleanly; every
    // request and notification of the calls.
    let port = server.addr().port().to_string();
    let server_port = format!("server.port={port}");
    let peer = [
        "network.transport=tcp",
        "network.protocol.name=http",
        "server.address=127.0.0.1",
        server_port.as_str(),
    ];
    assert_eq!(
        recorded.sum("mcp.client.session.duration", &peer, &["error.type"]),
        3
    );
    let op = "mcp.client.operation.duration";
    let calls = |tool: &str, extra: &[&str]| -> Vec<String> {
        let mut labels = vec![
            "mcp.method.name=tools/call".to_owned(),
            "gen_ai.operation.name=execute_tool".to_owned(),
            format!("gen_ai.tool.name={tool}"),
        ];
        labels.extend(extra.iter().chain(peer.iter()).map(|l| (*l).to_owned()));
        labels
    };
    let sum = |labels: Vec<String>, absent: &[&str]| {
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        recorded.sum(op, &labels, absent)
    };
    assert_eq!(sum(calls("echo", &[]), &["error.type"]), 2);
    assert_eq!(sum(calls("fail", &["error.type=tool_error"]), &[]), 1);
    assert_eq!(
        recorded.sum(op, &["mcp.method.name=initialize"], &["error.type"]),
        3
    );
    assert_eq!(
        recorded.sum(
            op,
            &["mcp.method.name=notifications/initialized"],
            &["error.type"]
        ),
        3
    );
    // The era probe, once: a handshake-era server refuses it, and that is its error.
    assert_eq!(
        recorded.sum(op, &["mcp.method.name=server/discover"], &[]),
        1
    );
    assert_eq!(
        recorded.sum(op, &["mcp.method.name=server/discover"], &["error.type"]),
        0
    );
    assert!(recorded.get("brain_mcp_connections_opened_total{}") >= 1);
    assert!(recorded.get("brain_mcp_bytes_received_total{}") > 0);
}

#[test]
fn a_managed_stdio_server_reports_its_operations_over_pipes() {
    let recorded = recording(async {
        {
            let cmd = Peer::everything_stdio_command().expect("server-everything");
            let server = ManagedServer::stdio("everything", &cmd.program)
                .args(&cmd.args)
                .tool(ToolSpec::new("echo", [TENANT]));
            let host = crate::stdio_support::host();
            host.add_server(server).await.expect("its tools load");
            let out =
                crate::stdio_support::call(&host, "echo", "m-pipe", json!({"message": "hi"})).await;
            assert_eq!(out.result["is_error"], false, "{}", out.result);
            assert!(host.shutdown(Duration::from_secs(10)).await);
        }
    });
    let op = "mcp.client.operation.duration";
    let pipe = "network.transport=pipe";
    let peer = ["server.address", "server.port", "network.protocol.name"];
    assert_eq!(
        recorded.sum(
            op,
            &["mcp.method.name=tools/call", "gen_ai.tool.name=echo", pipe],
            &peer
        ),
        1
    );
    // The reference server refuses the 2026 probe with -32601: that operation failed so.
    assert_eq!(
        recorded.sum(
            op,
            &[
                "mcp.method.name=server/discover",
                "error.type=-32601",
                "rpc.response.status_code=-32601",
                pipe
            ],
            &peer
        ),
        1
    );
    // A handshake-era child: its session opened with initialize and ended with it.
    assert!(recorded.sum(op, &["mcp.method.name=initialize", pipe], &peer) >= 1);
    // Every session opened ended: the call's, and those of children kept ready.
    assert_eq!(
        recorded.sum("mcp.client.session.duration", &[pipe], &["error.type"]),
        recorded.sum(
            op,
            &["mcp.method.name=notifications/initialized", pipe],
            &[]
        )
    );
    assert_eq!(
        recorded.sum(
            "mcp.client.session.duration",
            &["network.transport=tcp"],
            &[]
        ),
        0
    );
}

/// Accepts every form, after `delay` (a user taking their time).
struct SlowUser(Duration);

#[async_trait::async_trait]
impl brain_mcp_bind::Responder for SlowUser {
    async fn answer(
        &self,
        _: &brain_mcp_bind::ServerRequest<'_>,
    ) -> Result<serde_json::Value, brain_mcp_bind::Refusal> {
        tokio::time::sleep(self.0).await;
        Ok(json!({"action": "accept", "content": {"ok": true}}))
    }
}

#[test]
fn an_operation_lasts_until_its_answer_not_until_the_user_answers() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let user = Duration::from_millis(1500);
    let recorded = recording(async {
        let result = call_elicit_with(&server.url(), Arc::new(SlowUser(user)), "m-slow").await;
        assert!(!result.is_error, "{result:?}");
    });
    let op = "mcp.client.operation.duration";
    let rounds = ["mcp.method.name=tools/call", "gen_ai.tool.name=elicit"];
    assert_eq!(
        recorded.sum(op, &rounds, &[]),
        2,
        "input_required, then the answer"
    );
    let longest = recorded.largest(op, &rounds);
    assert!(
        longest < user.as_secs_f64() / 2.0,
        "a round lasted {longest} s: the user's time was counted"
    );
    // The tool call as a whole did wait for the user.
    assert!(
        recorded.largest("brain_tool_call_duration_seconds", &["tool=elicit"])
            >= user.as_secs_f64()
    );
}
