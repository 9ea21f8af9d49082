//! The worst patterns we know for a backtracking engine, over 1 MiB of input: with the
//! linear-time engine the schema check takes milliseconds, not seconds (or years).
//!
//! Besides criterion's figures it prints each case's time per check and the input size,
//! so the claim reads directly: `cargo bench -p brain-tools-core --bench patterns`.
#![allow(missing_docs, clippy::unwrap_used)] // a benchmark harness: a failed setup ends the run

use std::hint::black_box;
use std::time::{Duration, Instant};

use brain_tools_core::CompiledSchema;
use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};

/// One MiB.
const SIZE: usize = 1 << 20;

/// (name, pattern, input): nested quantifiers and overlapping alternations, each fed a
/// long run that almost matches and then fails at the end.
fn cases() -> Vec<(&'static str, &'static str, String)> {
    let a_then_b = format!("{}b", "a".repeat(SIZE - 1));
    vec![
        ("nested_plus", "^(a+)+$", a_then_b.clone()),
        ("nested_star", "^(a*)*$", a_then_b.clone()),
        ("alternation", "^(a|aa)+$", a_then_b.clone()),
        ("overlap_class", "^([a-z]+[a-z]*)+x$", a_then_b),
        (
            "email_like",
            r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
            "a".repeat(SIZE),
        ),
    ]
}

fn compiled(pattern: &str) -> CompiledSchema {
    CompiledSchema::compile(
        &json!({"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("pattern_1mib");
    group.sample_size(10);
    for (name, pattern, input) in cases() {
        let schema = compiled(pattern);
        let value: Value = json!({"v": input});
        assert!(!schema.is_valid(&value), "{name} must not match");
        group.bench_function(name, |b| b.iter(|| schema.is_valid(black_box(&value))));
    }
    group.finish();
}

fn summary() {
    println!("\nworst patterns over {SIZE} bytes, one check each (linear-time engine):");
    for (name, pattern, input) in cases() {
        let schema = compiled(pattern);
        let value: Value = json!({"v": input});
        let runs = 5;
        let start = Instant::now();
        for _ in 0..runs {
            black_box(schema.is_valid(black_box(&value)));
        }
        let each: Duration = start.elapsed() / runs;
        println!("  {name:<14} {:>8.2} ms", each.as_secs_f64() * 1e3);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
