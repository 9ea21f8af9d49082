//! The order of the rules, deadlines and cancel.

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use brain_tools_core::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

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
async fn text_arguments_go_on_as_written_unless_they_mean_two_things() {
    let binding = binding(json!({}));
    // The model's text reaches the executor as written, with its value parsed once.
    let text = r#"{"query": "x", "limit": 123456789012345678901234567890}"#;
    let executor = Recorder::returning(ToolOutput::text("hi"));
    let args = Arguments::from_json(text).unwrap();
    let result = run(&binding, ToolCall::new("acme", "s1", "c1", args), &executor).await;
    assert!(!result.is_error, "{result:?}");
    {
        let seen = executor.calls.lock().unwrap();
        assert_eq!(seen[0].0.arguments.text().map(|raw| raw.get()), Some(text));
        assert!(seen[0].0.arguments.object().is_some());
    }
    // A key twice (checked: the last; a server may read the first), a key serde_json
    // reads as something else, a number past f64: refused before the executor.
    for (text, said) in [
        (r#"{"query": 5, "query": "x"}"#, "the key \"query\" twice"),
        (
            r#"{"query": {"$serde_json::private::RawValue": "\"x\""}}"#,
            "serde_json reserves",
        ),
        (
            r#"{"query": "x", "limit": 1e400}"#,
            "past the range of an f64",
        ),
    ] {
        let executor = Recorder::returning(ToolOutput::text("hi"));
        let args = Arguments::from_json(text).unwrap();
        let result = run(&binding, ToolCall::new("acme", "s1", "c1", args), &executor).await;
        let message = assert_failure(&result, ErrorKind::InvalidArguments, false);
        assert!(message.contains(said), "{text}: {message}");
        assert_eq!(executor.call_count(), 0);
    }
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
    let values: Vec<f64> = seen.iter().map(|e| e.progress.as_f64()).collect();
    assert_eq!(values, [1.0, 2.5, 4.0]);
    assert!(
        seen.iter()
            .all(|e| e.call_id == "c1" && e.total == Some(10_u64.into()))
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
async fn a_call_s_own_shorter_limit_wins_and_a_longer_one_changes_nothing() {
    let binding = binding(json!({"timeout_seconds": 10}));
    let executor = Recorder::new(Behaviour::Hang { mark_sent: true });
    let start = tokio::time::Instant::now();
    let short = call("acme", json!({"query": "x"})).with_timeout(Duration::from_millis(1500));
    let result = run(&binding, short, &executor).await;
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    let message = assert_failure(&result, ErrorKind::Timeout, true);
    assert_eq!(
        message,
        "tool \"search\" did not finish within the call's own limit of 1.5 s"
    );

    let start = tokio::time::Instant::now();
    let long = call("acme", json!({"query": "x"})).with_timeout(Duration::from_secs(60));
    let result = run(&binding, long, &executor).await;
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(10),
        "the binding's limit"
    );
    let message = assert_failure(&result, ErrorKind::Timeout, true);
    assert_eq!(
        message,
        "tool \"search\" did not finish within its timeout of 10 s"
    );
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

#[tokio::test(start_paused = true)]
async fn the_executors_token_fires_on_the_callers_cancel_and_on_the_deadline() {
    let hanging = || Recorder::new(Behaviour::Hang { mark_sent: false });
    let query = || call("acme", json!({"query": "x"}));

    // The caller's cancel.
    let executor = hanging();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let result = run_cancellable(&binding(json!({})), query(), &executor, &cancel).await;
    assert_failure(&result, ErrorKind::Cancelled, false);
    assert!(
        executor.kept_cancel().is_cancelled(),
        "the caller's cancel reaches the executor's token"
    );

    // The deadline, with the caller's token never cancelled.
    let executor = hanging();
    let cancel = CancellationToken::new();
    let timed = binding(json!({"timeout_seconds": 2}));
    let result = run_cancellable(&timed, query(), &executor, &cancel).await;
    assert_failure(&result, ErrorKind::Timeout, false);
    assert!(
        executor.kept_cancel().is_cancelled(),
        "the deadline reaches the executor's token"
    );
    assert!(
        !cancel.is_cancelled(),
        "the caller's own token is left alone"
    );

    // The call's future dropped while the executor runs (a host's own timeout).
    let executor = hanging();
    let binding = binding(json!({}));
    let call = run_cancellable(&binding, query(), &executor, &cancel);
    let dropped = tokio::time::timeout(Duration::from_secs(1), call).await;
    assert!(dropped.is_err(), "the executor hangs");
    assert!(
        executor.kept_cancel().is_cancelled(),
        "a dropped call fires the executor's token"
    );
}

#[tokio::test]
async fn a_call_that_finishes_leaves_the_executors_token_alone() {
    let executor = Recorder::returning(ToolOutput::text("done"));
    let result = run(
        &binding(json!({})),
        call("acme", json!({"query": "x"})),
        &executor,
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    assert!(
        !executor.kept_cancel().is_cancelled(),
        "work the call left running is not cancelled"
    );
}
