//! Metrics of calls, sessions, connections and bytes, counted with a test recorder
//! (docs/observability.md). The tracing side has a test binary of its own
//! (`tests/observe`), since `tracing` caches per-callsite interest process-wide.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use brain_tests::server::{Era, ServerConfig, TestServer};
use brain_tools_core::{NoProgress, ToolCall};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::call_support::{Harness, TENANT, binding, spec};

/// Counters and histograms by name and labels.
#[derive(Default, Clone)]
struct Recorded(Arc<Mutex<BTreeMap<String, u64>>>);

impl Recorded {
    fn key(key: &metrics::Key) -> String {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        format!("{}{{{}}}", key.name(), labels.join(","))
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
    fn record(&self, _: f64) {
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

#[test]
fn calls_sessions_connections_and_bytes_are_counted() {
    let recorded = Recorded::default();
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    metrics::with_local_recorder(&recorded, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
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
        });
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
    assert_eq!(
        recorded.get("brain_mcp_sessions_ended_total{result=closed}"),
        3
    );
    assert!(recorded.get("brain_mcp_connections_opened_total{}") >= 1);
    assert!(recorded.get("brain_mcp_bytes_received_total{}") > 0);
}
