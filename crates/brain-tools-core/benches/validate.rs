//! Argument validation against a typical tool schema: the precompiled validator every call
//! uses, against compiling the schema per call (the defect the precompiled path avoids).
//!
//! Besides criterion's figures it prints the ratio of the two from a plain timing loop.
#![allow(missing_docs, clippy::unwrap_used)] // a benchmark harness: a failed setup ends the run

use std::hint::black_box;
use std::time::{Duration, Instant};

use brain_tools_core::{Binding, CompiledSchema};
use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 2000},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "language": {"type": "string", "enum": ["en", "de", "fr", "es", "ja"]},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9-]+$"}, "maxItems": 20},
            "filters": {
                "type": "object",
                "properties": {
                    "after": {"type": "string", "format": "date-time"},
                    "authors": {"type": "array", "items": {"type": "string"}},
                    "min_score": {"type": "number", "minimum": 0, "maximum": 1}
                },
                "additionalProperties": false
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

fn arguments() -> Value {
    json!({
        "query": "how do I rotate the API key",
        "limit": 20,
        "language": "en",
        "tags": ["security", "api-keys", "ops"],
        "filters": {"after": "2026-01-01T00:00:00Z", "authors": ["ana", "bo"], "min_score": 0.5}
    })
}

fn binding() -> Binding {
    Binding::from_value(&json!({
        "name": "docs_search",
        "description": "Search the docs.",
        "input_schema": schema(),
        "url": "https://example.com/mcp",
        "mcp_tool": "search",
        "tenants": ["local"]
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let binding = binding();
    let args = arguments();
    let schema = schema();
    assert!(binding.validate_arguments(&args).is_ok());
    let mut group = c.benchmark_group("validate_arguments");
    group.bench_function("precompiled", |b| {
        b.iter(|| binding.validate_arguments(black_box(&args)).is_ok())
    });
    group.bench_function("compile_per_call", |b| {
        b.iter(|| {
            let compiled = CompiledSchema::compile(black_box(&schema)).unwrap();
            compiled.validate(black_box(&args)).is_ok()
        })
    });
    group.finish();
}

/// Mean time per iteration of `f` over about `budget`.
fn mean(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < budget {
        f();
        runs += 1;
    }
    start.elapsed() / runs.max(1)
}

fn ratio() {
    let binding = binding();
    let args = arguments();
    let schema = schema();
    let budget = Duration::from_millis(500);
    let precompiled = mean(budget, || {
        black_box(binding.validate_arguments(black_box(&args)).is_ok());
    });
    let per_call = mean(budget, || {
        let compiled = CompiledSchema::compile(black_box(&schema)).unwrap();
        black_box(compiled.validate(black_box(&args)).is_ok());
    });
    println!(
        "validate_arguments: precompiled {precompiled:?}/call, compile per call {per_call:?}/call, \
         ratio {:.1}x",
        per_call.as_secs_f64() / precompiled.as_secs_f64()
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratio();
}
