//! Schemas that cost more than linear time (an exponential `anyOf` over references, a
//! quadratic `uniqueItems`): their checks run off the async workers, inside the call's
//! deadline, and other calls go on meanwhile.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test

use std::time::{Duration, Instant};

use async_trait::async_trait;
use brain_tools_core::{
    Binding, ErrorKind, ExecContext, NoProgress, Secret, ToolCall, ToolExecutor, ToolFailure,
    ToolOutput, run_call_with,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A schema whose check of `{"v":{"a":{"a":...1}}}` doubles in cost with each level: two
/// identical `anyOf` branches that both recurse, and both fail at the innermost `1`.
fn exponential() -> Value {
    let branch =
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["a"]});
    json!({
        "type": "object",
        "$defs": {"n": {"anyOf": [branch.clone(), branch]}},
        "properties": {"v": {"$ref": "#/$defs/n"}}
    })
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!({"a": inner}))
}

fn binding(input: Value, output: Option<Value>) -> Binding {
    let mut spec = json!({
        "name": "costly", "description": "d", "input_schema": input,
        "tenants": ["t"], "timeout_seconds": 1
    });
    if let Some(output) = output {
        spec["output_schema"] = output;
    }
    Binding::from_value(&spec).unwrap()
}

struct Returns(Value);

#[async_trait]
impl ToolExecutor for Returns {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        ctx.mark_sent();
        Ok(ToolOutput::new(
            Vec::new(),
            Some(self.0.clone().into()),
            false,
        ))
    }
}

fn no_token(_: &str) -> Result<Secret, brain_tools_core::SecretError> {
    Ok(Secret::new("t"))
}

/// Runs `f` on a current-thread runtime (so a blocked worker would block everything) and
/// leaves any check still running behind instead of waiting for it.
fn on_one_thread<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(f);
    rt.shutdown_background();
    out
}

#[test]
fn a_costly_output_check_ends_at_the_deadline_and_others_go_on() {
    on_one_thread(async {
        let slow = binding(json!({"type": "object"}), Some(exponential()));
        let quick = binding(json!({"type": "object"}), None);
        let deep = Returns(json!({"v": nested(17)}));
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let (slow_result, quick_result) = tokio::join!(
            run_call_with(
                &slow,
                ToolCall::new("t", "s", "c-slow", json!({})),
                &deep,
                &NoProgress,
                &cancel,
                &no_token,
            ),
            async {
                // Another call on the same (single) thread, while the check runs.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let begun = Instant::now();
                let result = run_call_with(
                    &quick,
                    ToolCall::new("t", "s", "c-quick", json!({})),
                    &Returns(json!({"ok": true})),
                    &NoProgress,
                    &CancellationToken::new(),
                    &no_token,
                )
                .await;
                (result, begun.elapsed())
            }
        );
        assert_eq!(
            slow_result.error_kind(),
            Some(ErrorKind::Timeout),
            "{slow_result:?}"
        );
        assert_eq!(slow_result.unknown_outcome, Some(true), "the tool ran");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        let (quick_result, took) = quick_result;
        assert!(!quick_result.is_error, "{quick_result:?}");
        assert!(
            took < Duration::from_millis(700),
            "the other call waited {took:?}"
        );
    });
}

#[test]
fn a_costly_argument_check_ends_at_the_deadline_before_anything_is_sent() {
    on_one_thread(async {
        let slow = binding(exponential(), None);
        let started = Instant::now();
        let result = run_call_with(
            &slow,
            ToolCall::new("t", "s", "c-args", json!({"v": nested(17)})),
            &Returns(json!({})),
            &NoProgress,
            &CancellationToken::new(),
            &no_token,
        )
        .await;
        assert_eq!(result.error_kind(), Some(ErrorKind::Timeout), "{result:?}");
        assert_eq!(result.unknown_outcome, Some(false), "nothing was sent");
        assert!(started.elapsed() < Duration::from_secs(4));
    });
}

#[test]
fn cheap_schemas_are_checked_in_place_and_costly_ones_are_flagged() {
    let cheap = binding(
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        None,
    );
    assert!(!cheap.input_validator().is_costly());
    for costly in [
        exponential(),
        json!({"type": "object", "properties": {"v": {"type": "array", "uniqueItems": true}}}),
        json!({"type": "object", "properties": {"v": {"type": "string", "pattern": "^a+$"}}}),
    ] {
        assert!(
            binding(costly.clone(), None).input_validator().is_costly(),
            "{costly}"
        );
    }
}
