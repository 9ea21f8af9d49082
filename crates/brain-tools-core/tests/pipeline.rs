//! The call pipeline with a recording executor: order of the rules, deadlines, cancel,
//! output limit and output-schema check.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::unreachable)] // test code: a failed expectation is a failed test

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use brain_tools_core::{
    Binding, ContentBlock, ErrorKind, ExecContext, NoProgress, ProgressEvent, Secret, SecretError,
    ToolCall, ToolExecutor, ToolFailure, ToolOutput, ToolResultEvent, run_call, run_call_with,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn binding(extra: Value) -> Binding {
    let mut value = json!({
        "name": "search",
        "description": "Search.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["query"]
        },
        "url": "https://example.com/mcp",
        "mcp_tool": "search",
        "tenants": ["acme", "local"],
        "timeout_seconds": 10
    });
    for (key, field) in extra.as_object().unwrap() {
        value[key] = field.clone();
    }
    Binding::from_value(&value).unwrap()
}

fn call(tenant: &str, arguments: Value) -> ToolCall {
    ToolCall::new(tenant, "s1", "c1", arguments)
}

/// What the executor does once called.
#[derive(Clone)]
enum Behaviour {
    Return(Result<ToolOutput, ToolFailure>),
    /// Report these progress values, then return text.
    Progress(Vec<f64>),
    /// Wait forever, optionally after marking the invocation sent.
    Hang {
        mark_sent: bool,
    },
}

/// Records every call it receives and whether its future was dropped unfinished.
struct Recorder {
    behaviour: Behaviour,
    calls: Mutex<Vec<(ToolCall, Option<String>)>>,
    dropped_unfinished: Arc<AtomicBool>,
}

impl Recorder {
    fn new(behaviour: Behaviour) -> Self {
        Self {
            behaviour,
            calls: Mutex::new(Vec::new()),
            dropped_unfinished: Arc::new(AtomicBool::new(false)),
        }
    }

    fn returning(output: ToolOutput) -> Self {
        Self::new(Behaviour::Return(Ok(output)))
    }

    fn call_count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

/// Sets a flag when dropped before `finish`.
struct DropFlag(Arc<AtomicBool>, bool);

impl Drop for DropFlag {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl ToolExecutor for Recorder {
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
        self.calls.lock().unwrap().push((
            ctx.call.clone(),
            ctx.token.as_ref().map(|t| t.expose().to_owned()),
        ));
        let mut flag = DropFlag(self.dropped_unfinished.clone(), false);
        let result = match &self.behaviour {
            Behaviour::Return(result) => result.clone(),
            Behaviour::Progress(values) => {
                for value in values {
                    let number = serde_json::Number::from_f64(*value).unwrap();
                    ctx.progress.report(number, Some(10.into()), None);
                    tokio::task::yield_now().await;
                }
                Ok(ToolOutput::text("done"))
            }
            Behaviour::Hang { mark_sent } => {
                if *mark_sent {
                    ctx.mark_sent();
                }
                std::future::pending::<()>().await;
                unreachable!()
            }
        };
        flag.1 = true;
        result
    }
}

fn tokens(var: &str) -> Result<Secret, SecretError> {
    match var {
        "GOOD_TOKEN" => Ok(Secret::new("s3cr3t-value")),
        "EMPTY_TOKEN" => Err(SecretError::Empty(var.to_owned())),
        _ => Err(SecretError::Missing(var.to_owned())),
    }
}

async fn run(binding: &Binding, call: ToolCall, executor: &Recorder) -> ToolResultEvent {
    run_call_with(
        binding,
        call,
        executor,
        &NoProgress,
        &CancellationToken::new(),
        &tokens,
    )
    .await
}

fn assert_failure(result: &ToolResultEvent, kind: ErrorKind, unknown: bool) -> String {
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.error_kind(), Some(kind), "{result:?}");
    assert_eq!(result.unknown_outcome, Some(unknown), "{result:?}");
    assert!(result.content.is_empty());
    assert_eq!(result.call_id, "c1");
    result.error.as_ref().unwrap().message.clone()
}

#[tokio::test]
async fn a_valid_call_reaches_the_executor_and_succeeds() {
    let binding = binding(json!({}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let result = run(&binding, call("acme", json!({"query": "x"})), &executor).await;
    assert_eq!(
        result,
        ToolResultEvent::success("c1", vec![ContentBlock::text("hi")], None)
    );
    let calls = executor.calls.lock().unwrap();
    assert_eq!(calls[0].0, call("acme", json!({"query": "x"})));
    assert_eq!(calls[0].1, None, "no token_env, no token");
}

#[tokio::test]
async fn a_tenant_not_in_the_list_is_refused_before_the_executor() {
    let binding = binding(json!({}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let result = run(&binding, call("evil", json!({"query": "x"})), &executor).await;
    let message = assert_failure(&result, ErrorKind::TenantNotAllowed, false);
    assert_eq!(message, "tenant \"evil\" may not use tool \"search\"");
    assert_eq!(executor.call_count(), 0);
}

#[tokio::test]
async fn the_tenant_is_checked_before_the_arguments() {
    let binding = binding(json!({}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let result = run(&binding, call("evil", json!({"query": 5})), &executor).await;
    assert_failure(&result, ErrorKind::TenantNotAllowed, false);
}

#[tokio::test]
async fn invalid_arguments_are_refused_with_every_violation() {
    let binding = binding(json!({}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let result = run(&binding, call("acme", json!({"limit": 0})), &executor).await;
    let message = assert_failure(&result, ErrorKind::InvalidArguments, false);
    assert_eq!(
        message,
        "arguments do not match the input schema of \"search\": (root): \"query\" is a \
         required property; /limit: 0 is less than the minimum of 1"
    );
    assert_eq!(executor.call_count(), 0);
}

#[tokio::test]
async fn arguments_are_checked_before_the_token() {
    let binding = binding(json!({"token_env": "UNSET_TOKEN"}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let result = run(&binding, call("acme", json!({})), &executor).await;
    assert_failure(&result, ErrorKind::InvalidArguments, false);
}

#[tokio::test]
async fn a_missing_or_empty_token_is_refused_before_the_executor() {
    let executor = Recorder::returning(ToolOutput::text("hi"));
    for (var, reason) in [("UNSET_TOKEN", "is not set"), ("EMPTY_TOKEN", "is empty")] {
        let binding = binding(json!({"token_env": var}));
        let result = run(&binding, call("acme", json!({"query": "x"})), &executor).await;
        let message = assert_failure(&result, ErrorKind::MissingToken, false);
        assert_eq!(
            message,
            format!("no token for tool \"search\": environment variable {var} {reason}")
        );
    }
    assert_eq!(executor.call_count(), 0);
}

#[tokio::test]
async fn the_token_is_read_from_the_environment_and_handed_over() {
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let binding = binding(json!({"token_env": "GOOD_TOKEN"}));
    let result = run(&binding, call("acme", json!({"query": "x"})), &executor).await;
    assert!(!result.is_error);
    assert_eq!(
        executor.calls.lock().unwrap()[0].1.as_deref(),
        Some("s3cr3t-value")
    );

    // The real lookup: cargo sets CARGO_PKG_NAME for test runs.
    let binding = self::binding(json!({"token_env": "CARGO_PKG_NAME"}));
    let result = run_call(
        &binding,
        call("acme", json!({"query": "x"})),
        &executor,
        &NoProgress,
        &CancellationToken::new(),
    )
    .await;
    assert!(!result.is_error);
    assert_eq!(
        executor.calls.lock().unwrap()[1].1.as_deref(),
        Some("brain-tools-core")
    );
    let unset = self::binding(json!({"token_env": "BRAIN_TOOLS_CORE_SURELY_UNSET_TOKEN"}));
    let result = run_call(
        &unset,
        call("acme", json!({"query": "x"})),
        &executor,
        &NoProgress,
        &CancellationToken::new(),
    )
    .await;
    assert_failure(&result, ErrorKind::MissingToken, false);
    assert_eq!(executor.call_count(), 2);
}

#[tokio::test]
async fn the_token_never_appears_in_debug_output_of_the_context() {
    struct Peek(Mutex<String>);
    #[async_trait]
    impl ToolExecutor for Peek {
        async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
            *self.0.lock().unwrap() = format!("{ctx:?}");
            Err(ToolFailure::before_send(
                ErrorKind::ConnectFailed,
                "no route",
            ))
        }
    }
    let peek = Peek(Mutex::new(String::new()));
    let binding = binding(json!({"token_env": "GOOD_TOKEN"}));
    let result = run_call_with(
        &binding,
        call("acme", json!({"query": "x"})),
        &peek,
        &NoProgress,
        &CancellationToken::new(),
        &tokens,
    )
    .await;
    let debug = peek.0.lock().unwrap().clone();
    assert!(debug.contains("Secret(***)"), "{debug}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    assert!(!serde_json::to_string(&result).unwrap().contains("s3cr3t"));
}

#[tokio::test]
async fn executor_failures_pass_through() {
    let binding = binding(json!({}));
    for failure in [
        ToolFailure::before_send(ErrorKind::ConnectFailed, "connection refused"),
        ToolFailure::after_send(ErrorKind::ConnectionLost, "reset"),
    ] {
        let executor = Recorder::new(Behaviour::Return(Err(failure.clone())));
        let result = run(&binding, call("acme", json!({"query": "x"})), &executor).await;
        let message = assert_failure(&result, failure.kind, failure.unknown_outcome);
        assert_eq!(message, failure.message);
    }
}

#[tokio::test]
async fn progress_is_live_in_order_and_non_increasing_values_are_dropped() {
    let binding = binding(json!({}));
    let executor = Recorder::new(Behaviour::Progress(vec![1.0, 2.5, 2.5, 2.0, 4.0]));
    let seen = Mutex::new(Vec::<ProgressEvent>::new());
    let sink = |event: ProgressEvent| seen.lock().unwrap().push(event);
    let result = run_call_with(
        &binding,
        call("acme", json!({"query": "x"})),
        &executor,
        &sink,
        &CancellationToken::new(),
        &tokens,
    )
    .await;
    assert!(!result.is_error);
    let seen = seen.into_inner().unwrap();
    let values: Vec<f64> = seen.iter().map(|e| e.progress.as_f64().unwrap()).collect();
    assert_eq!(values, [1.0, 2.5, 4.0]);
    assert!(
        seen.iter()
            .all(|e| e.call_id == "c1" && e.total == Some(10.into()))
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_drops_the_executor_and_reports_timeout() {
    let binding = binding(json!({"timeout_seconds": 10}));
    for mark_sent in [false, true] {
        let executor = Recorder::new(Behaviour::Hang { mark_sent });
        let start = tokio::time::Instant::now();
        let result = run(&binding, call("acme", json!({"query": "x"})), &executor).await;
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        let message = assert_failure(&result, ErrorKind::Timeout, mark_sent);
        assert_eq!(
            message,
            "tool \"search\" did not finish within its timeout of 10 s"
        );
        assert!(
            executor.dropped_unfinished.load(Ordering::SeqCst),
            "future was dropped"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_that_finishes_in_time_is_not_cut() {
    struct Slow;
    #[async_trait]
    impl ToolExecutor for Slow {
        async fn execute(&self, _ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure> {
            tokio::time::sleep(Duration::from_millis(9_999)).await;
            Ok(ToolOutput::text("just in time"))
        }
    }
    let binding = binding(json!({"timeout_seconds": 10}));
    let result = run_call_with(
        &binding,
        call("acme", json!({"query": "x"})),
        &Slow,
        &NoProgress,
        &CancellationToken::new(),
        &tokens,
    )
    .await;
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_drops_the_executor_and_reports_cancelled() {
    let binding = binding(json!({}));
    for mark_sent in [false, true] {
        let executor = Recorder::new(Behaviour::Hang { mark_sent });
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            trigger.cancel();
        });
        let result = run_call_with(
            &binding,
            call("acme", json!({"query": "x"})),
            &executor,
            &NoProgress,
            &cancel,
            &tokens,
        )
        .await;
        let message = assert_failure(&result, ErrorKind::Cancelled, mark_sent);
        assert_eq!(message, "the call was cancelled");
        assert!(executor.dropped_unfinished.load(Ordering::SeqCst));
    }
}

#[tokio::test]
async fn an_already_cancelled_call_never_reaches_the_executor() {
    let binding = binding(json!({}));
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = run_call_with(
        &binding,
        call("acme", json!({"query": "x"})),
        &executor,
        &NoProgress,
        &cancel,
        &tokens,
    )
    .await;
    assert_failure(&result, ErrorKind::Cancelled, false);
    assert_eq!(executor.call_count(), 0);
}

#[tokio::test]
async fn output_over_the_limit_fails_and_at_the_limit_passes() {
    let output = ToolOutput::new(
        vec![ContentBlock::text("x".repeat(100))],
        Some(json!({"n": 1})),
        false,
    );
    let size = output.serialized_len(usize::MAX);
    assert_eq!(
        size,
        serde_json::to_vec(&output.content).unwrap().len() + r#"{"n":1}"#.len()
    );
    let at_limit = binding(json!({"max_output_bytes": size}));
    let executor = Recorder::returning(output.clone());
    let result = run(&at_limit, call("acme", json!({"query": "x"})), &executor).await;
    assert!(!result.is_error, "{result:?}");

    let over = binding(json!({"max_output_bytes": size - 1}));
    let result = run(&over, call("acme", json!({"query": "x"})), &executor).await;
    let message = assert_failure(&result, ErrorKind::OutputTooLarge, true);
    assert_eq!(
        message,
        format!(
            "the result of tool \"search\" is larger than its max_output_bytes ({} bytes)",
            size - 1
        )
    );

    // The tool's own error results are limited too.
    let tool_error = Recorder::returning({
        let mut c = output;
        c.is_error = true;
        c
    });
    let result = run(&over, call("acme", json!({"query": "x"})), &tool_error).await;
    assert_failure(&result, ErrorKind::OutputTooLarge, true);
}

#[tokio::test]
async fn the_structured_value_counts_once_and_gets_one_text_copy() {
    // 600 KB of structured content, sent with its text copy as MCP asks: the tool
    // returned 600 KB, which is under 1 MiB.
    let structured = json!({"blob": "y".repeat(600_000)});
    let copy = ContentBlock::text(serde_json::to_string_pretty(&structured).unwrap());
    let output = ToolOutput::new(vec![copy.clone()], Some(structured.clone()), false);
    let size = output.serialized_len(usize::MAX);
    // The value once, plus what the copy has beyond it (its block and its spacing):
    // the size of the copy's block alone.
    let block = serde_json::to_string(&copy).unwrap().len();
    assert_eq!(size, 2 + block);
    assert!(size < 2 * structured.to_string().len(), "not counted twice");
    let limited = binding(json!({"max_output_bytes": 1_048_576}));
    let result = run(
        &limited,
        call("acme", json!({"query": "x"})),
        &Recorder::returning(output),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.error);
    assert_eq!(
        result.content,
        vec![copy],
        "the server's copy is kept, not doubled"
    );

    // Without a copy, Brain adds one after the limit was applied.
    let bare = ToolOutput::new(
        vec![ContentBlock::text("note")],
        Some(json!({"n": 12345678901234567890123_u128})),
        false,
    );
    let at_limit = binding(json!({"max_output_bytes": bare.serialized_len(usize::MAX)}));
    let result = run(
        &at_limit,
        call("acme", json!({"query": "x"})),
        &Recorder::returning(bare),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.error);
    assert_eq!(
        result.content,
        vec![
            ContentBlock::text("note"),
            ContentBlock::text(r#"{"n":12345678901234567890123}"#)
        ]
    );
}

#[test]
fn a_padded_or_any_typed_copy_is_counted_for_its_excess() {
    // A "copy" padded with 200 KB of spaces counts for the padding.
    let padded = ToolOutput::new(
        vec![ContentBlock::text(format!(
            "{{\"a\":1}}{}",
            " ".repeat(200_000)
        ))],
        Some(json!({"a": 1})),
        false,
    );
    assert!(padded.serialized_len(usize::MAX) > 200_000);
    // A structured array and its JSON text: counted once, and no second copy is added.
    let array = json!(["x".repeat(300_000)]);
    let mut output = ToolOutput::new(
        vec![ContentBlock::text(array.to_string())],
        Some(array.clone()),
        false,
    );
    let size = output.serialized_len(usize::MAX);
    assert!(size < 2 * array.to_string().len(), "{size}");
    output.add_structured_copy();
    assert_eq!(output.content.len(), 1);
}

#[tokio::test]
async fn failure_messages_stay_small_whatever_the_executor_says() {
    let huge = "e".repeat(7_000_000);
    let executor = Recorder::new(Behaviour::Return(Err(ToolFailure::after_send(
        ErrorKind::RpcError,
        huge,
    ))));
    let result = run(
        &binding(json!({})),
        call("acme", json!({"query": "x"})),
        &executor,
    )
    .await;
    let message = assert_failure(&result, ErrorKind::RpcError, true);
    assert!(
        message.len() <= brain_tools_core::MAX_ERROR_MESSAGE,
        "{}",
        message.len()
    );
    assert!(message.ends_with("[cut]"), "the cut is marked");
    let line = serde_json::to_string(&result).unwrap();
    assert!(line.len() < 5_000, "{}", line.len());
}

#[tokio::test]
async fn structured_results_are_checked_against_the_output_schema() {
    let binding = binding(json!({"output_schema": {
        "type": "object",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"]
    }}));
    let structured = |value: Value| {
        ToolOutput::new(
            vec![ContentBlock::text(value.to_string())],
            Some(value),
            false,
        )
    };

    let good = Recorder::returning(structured(json!({"total": 3})));
    let result = run(&binding, call("acme", json!({"query": "x"})), &good).await;
    assert_eq!(result.structured_content, Some(json!({"total": 3})));
    assert!(!result.is_error);

    let bad = Recorder::returning(structured(json!({"total": "three"})));
    let result = run(&binding, call("acme", json!({"query": "x"})), &bad).await;
    let message = assert_failure(&result, ErrorKind::OutputSchemaMismatch, true);
    assert_eq!(
        message,
        "the result of tool \"search\" does not match its output_schema: /total: \"three\" is \
         not of type \"integer\""
    );

    let missing = Recorder::returning(ToolOutput::text("no structure"));
    let result = run(&binding, call("acme", json!({"query": "x"})), &missing).await;
    let message = assert_failure(&result, ErrorKind::OutputSchemaMismatch, true);
    assert_eq!(
        message,
        "the result of tool \"search\" does not match its output_schema: the tool returned no \
         structured content"
    );

    // A tool's own error result is not checked, and keeps its content.
    let tool_error = Recorder::returning({
        let mut c = ToolOutput::text("it broke");
        c.is_error = true;
        c
    });
    let result = run(&binding, call("acme", json!({"query": "x"})), &tool_error).await;
    assert_eq!(
        result,
        ToolResultEvent::tool_error("c1", vec![ContentBlock::text("it broke")], None)
    );
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(future)
}

proptest! {
    #[test]
    fn no_tenant_outside_the_list_reaches_the_executor(tenant in "\\PC{0,12}") {
        prop_assume!(tenant != "acme" && tenant != "local");
        let binding = binding(json!({}));
        let executor = Recorder::returning(ToolOutput::text("hi"));
        let result = block_on(run(&binding, call(&tenant, json!({"query": "x"})), &executor));
        prop_assert_eq!(result.error_kind(), Some(ErrorKind::TenantNotAllowed));
        prop_assert_eq!(executor.call_count(), 0);
    }

    #[test]
    fn no_invalid_arguments_reach_the_executor(query in any::<i64>(), limit in -5i64..1) {
        let binding = binding(json!({}));
        let executor = Recorder::returning(ToolOutput::text("hi"));
        let arguments = json!({"query": query, "limit": limit});
        let result = block_on(run(&binding, call("acme", arguments), &executor));
        prop_assert_eq!(result.error_kind(), Some(ErrorKind::InvalidArguments));
        let message = &result.error.as_ref().unwrap().message;
        prop_assert!(message.contains("/query: "), "{}", message);
        prop_assert!(message.contains("/limit: "), "{}", message);
        prop_assert_eq!(executor.call_count(), 0);
    }
}
