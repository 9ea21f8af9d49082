//! The output limit, the structured copy, failure message bounds and the output-schema check.

use proptest::prelude::*;

use brain_tools_core::*;
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test]
async fn output_over_the_limit_fails_and_at_the_limit_passes() {
    let output = ToolOutput::new(
        vec![ContentBlock::text("x".repeat(100))],
        Some(json!({"n": 1}).into()),
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
    let output = ToolOutput::new(vec![copy.clone()], Some(structured.clone().into()), false);
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
        Some(JsonText::parse(r#"{"n": 12345678901234567890123}"#).unwrap()),
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
        Some(json!({"a": 1}).into()),
        false,
    );
    assert!(padded.serialized_len(usize::MAX) > 200_000);
    // A structured array and its JSON text: counted once, and no second copy is added.
    let array = json!(["x".repeat(300_000)]);
    let mut output = ToolOutput::new(
        vec![ContentBlock::text(array.to_string())],
        Some(array.clone().into()),
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
    assert!(message.len() <= MAX_ERROR_MESSAGE, "{}", message.len());
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
            Some(value.into()),
            false,
        )
    };

    let good = Recorder::returning(structured(json!({"total": 3})));
    let result = run(&binding, call("acme", json!({"query": "x"})), &good).await;
    assert_eq!(result.structured_content, Some(json!({"total": 3}).into()));
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

#[tokio::test]
async fn a_structured_result_that_means_two_things_fails_its_output_schema() {
    let binding = binding(json!({"output_schema": {
        "type": "object", "properties": {"ok": {"const": true}}, "required": ["ok"]
    }}));
    // Checked as the last "ok", read by some hosts as the first; and a key serde_json
    // would read as the object inside the string.
    for (text, said) in [
        (r#"{"ok": false, "ok": true}"#, "twice"),
        (
            r#"{"$serde_json::private::RawValue": "{\"ok\":true}"}"#,
            "serde_json reserves",
        ),
    ] {
        let output = ToolOutput::new(vec![], Some(JsonText::parse(text).unwrap()), false);
        let result = run(
            &binding,
            call("acme", json!({"query": "x"})),
            &Recorder::returning(output),
        )
        .await;
        let message = assert_failure(&result, ErrorKind::OutputSchemaMismatch, true);
        assert!(message.contains(said), "{text}: {message}");
    }
    // Past f64's range, with no output schema: delivered as written.
    let plain = super::support::binding(json!({}));
    let text = r#"{"n": 1e400}"#;
    let output = ToolOutput::new(vec![], Some(JsonText::parse(text).unwrap()), false);
    let result = run(
        &plain,
        call("acme", json!({"query": "x"})),
        &Recorder::returning(output),
    )
    .await;
    assert_eq!(
        result.structured_content.as_ref().map(JsonText::as_str),
        Some(text)
    );
}
