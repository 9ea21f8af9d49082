//! The call pipeline: the rules every tool call passes, whatever carries it.
//!
//! In order: tenant allowlist, argument validation, token, then the executor under the
//! deadline (`timeout_seconds` over the whole call) and the caller's cancel, then the output
//! limit and the output-schema check. A call refused before the executor never reaches it.

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::binding::Binding;
use crate::checks::{self, Stop};
use crate::event::{ErrorKind, ToolResultEvent};
use crate::executor::{
    ExecContext, ProgressReporter, ProgressSink, SendMarker, ToolCall, ToolExecutor, ToolOutput,
};
use crate::observe;
use crate::secret::{Secret, SecretError};

/// Runs `call` of `binding` through the pipeline with `executor`, delivering progress to
/// `sink`, and returns the one result event. Never panics and never returns early without
/// a result: every outcome is an event.
///
/// When `cancel` fires or the deadline passes, the executor's future is dropped and the result
/// is `cancelled` or `timeout`, with `unknown_outcome` set if the executor had marked the
/// invocation as sent.
pub async fn run_call(
    binding: &Binding,
    call: ToolCall,
    executor: &dyn ToolExecutor,
    sink: &dyn ProgressSink,
    cancel: &CancellationToken,
) -> ToolResultEvent {
    run_call_with(binding, call, executor, sink, cancel, &Secret::from_env).await
}

/// [`run_call`] with the token lookup replaced, for tests and hosts that keep tokens
/// elsewhere than in the process environment.
///
/// The call runs inside a `tool_call` span and ends with one `info` event and the call
/// metrics (docs/observability.md).
pub async fn run_call_with(
    binding: &Binding,
    call: ToolCall,
    executor: &dyn ToolExecutor,
    sink: &dyn ProgressSink,
    cancel: &CancellationToken,
    token_lookup: &(dyn Fn(&str) -> Result<Secret, SecretError> + Sync),
) -> ToolResultEvent {
    let span = observe::span(binding, &call);
    let started = std::time::Instant::now();
    let result = pipeline(binding, call, executor, sink, cancel, token_lookup)
        .instrument(span.clone())
        .await;
    observe::finished(&span, binding, &result, started.elapsed());
    result
}

/// Every step of [`run_call_with`], in order.
async fn pipeline(
    binding: &Binding,
    mut call: ToolCall,
    executor: &dyn ToolExecutor,
    sink: &dyn ProgressSink,
    cancel: &CancellationToken,
    token_lookup: &(dyn Fn(&str) -> Result<Secret, SecretError> + Sync),
) -> ToolResultEvent {
    let limit = call.limit(binding);
    let deadline = tokio::time::Instant::now() + limit;
    let refuse =
        |kind, message: String| ToolResultEvent::failure(&call.call_id, kind, message, false);

    if !binding.allows_tenant(&call.tenant) {
        return refuse(
            ErrorKind::TenantNotAllowed,
            format!(
                "tenant \"{}\" may not use tool \"{}\"",
                call.tenant,
                binding.name()
            ),
        );
    }
    let arguments = match call.arguments.take_parsed() {
        Ok(arguments) => arguments,
        Err(error) => {
            return refuse(
                ErrorKind::InvalidArguments,
                format!("the arguments of \"{}\" {error}", binding.name()),
            );
        }
    };
    match checks::validate(binding.input_validator(), arguments, deadline, cancel).await {
        Ok((arguments, Ok(()))) => call.arguments.restore(arguments),
        Ok((_, Err(violations))) => {
            return refuse(
                ErrorKind::InvalidArguments,
                format!(
                    "arguments do not match the input schema of \"{}\": {violations}",
                    binding.name()
                ),
            );
        }
        Err(stop) => return stopped(binding, &call.call_id, stop, false, limit),
    }
    let token = match binding.token_env().map(token_lookup).transpose() {
        Ok(token) => token,
        Err(error) => {
            return refuse(
                ErrorKind::MissingToken,
                format!("no token for tool \"{}\": {error}", binding.name()),
            );
        }
    };
    if cancel.is_cancelled() {
        return refuse(ErrorKind::Cancelled, "the call was cancelled".to_owned());
    }

    let reporter = ProgressReporter::new(&call.call_id, sink);
    let sent = SendMarker::new();
    // A token of the call's own, not a child of the caller's: a child is linked into
    // its parent under the parent's lock and unlinked again when dropped, so calls that
    // share the caller's token would contend on it twice per call. It fires whenever the
    // call ends other than by finishing: stopped by the caller or the deadline (here or
    // while the output is checked), or its future dropped.
    let exec_cancel = CancellationToken::new();
    let fire = exec_cancel.clone().drop_guard();
    let ctx = ExecContext {
        call: &call,
        binding,
        token,
        progress: &reporter,
        cancel: exec_cancel,
        sent: &sent,
        deadline,
    };
    let outcome = tokio::select! {
        biased;
        result = executor.execute(ctx) => Ok(result),
        () = cancel.cancelled() => Err(Stop::Cancelled),
        () = tokio::time::sleep_until(deadline) => Err(Stop::Timeout),
    };
    // The executor's future is dropped by now; when it was interrupted, `fire` tells the
    // tasks it spawned as it goes.
    let result = match outcome {
        Ok(result) => result,
        Err(stop) => return stopped(binding, &call.call_id, stop, sent.was_sent(), limit),
    };
    let event = match result {
        Ok(output) => finish(binding, &call.call_id, output, (deadline, limit), cancel).await,
        Err(failure) => ToolResultEvent::failure(
            &call.call_id,
            failure.kind,
            failure.message,
            failure.unknown_outcome,
        ),
    };
    let stop = event
        .error
        .as_ref()
        .is_some_and(|e| matches!(e.kind, ErrorKind::Cancelled | ErrorKind::Timeout));
    if !stop {
        fire.disarm();
    }
    event
}

/// The result of a call stopped by its deadline or its caller; `unknown_outcome` says
/// whether the tool may have been invoked.
fn stopped(
    binding: &Binding,
    call_id: &str,
    stop: Stop,
    unknown_outcome: bool,
    limit: std::time::Duration,
) -> ToolResultEvent {
    let (kind, message) = match stop {
        Stop::Cancelled => (ErrorKind::Cancelled, "the call was cancelled".to_owned()),
        Stop::Timeout if limit < binding.timeout() => (
            ErrorKind::Timeout,
            format!(
                "tool \"{}\" did not finish within the call's own limit of {} s",
                binding.name(),
                limit.as_secs_f64()
            ),
        ),
        Stop::Timeout => (
            ErrorKind::Timeout,
            format!(
                "tool \"{}\" did not finish within its timeout of {} s",
                binding.name(),
                binding.timeout().as_secs()
            ),
        ),
    };
    ToolResultEvent::failure(call_id, kind, message, unknown_outcome)
}

/// Applies the output limit and the output-schema check to what the tool returned (inside
/// the call's deadline and cancellation), then adds the text copy of a structured value
/// (not counted against the limit).
async fn finish(
    binding: &Binding,
    call_id: &str,
    mut output: ToolOutput,
    (deadline, time_limit): (tokio::time::Instant, std::time::Duration),
    cancel: &CancellationToken,
) -> ToolResultEvent {
    let limit = binding.max_output_bytes();
    if output.serialized_len(limit) > limit {
        return ToolResultEvent::failure(
            call_id,
            ErrorKind::OutputTooLarge,
            format!(
                "the result of tool \"{}\" is larger than its max_output_bytes ({limit} bytes)",
                binding.name()
            ),
            true,
        );
    }
    output.add_structured_copy();
    if output.is_error {
        return ToolResultEvent::tool_error(call_id, output.content, output.structured_content);
    }
    if let Some(validator) = binding.output_validator() {
        let mismatch = match output.structured_content.take() {
            None => Some("the tool returned no structured content".to_owned()),
            Some(structured) => match crate::json_keys::check_keys(structured.as_str())
                .map_err(crate::exact::Unjudged::Keys)
                .and_then(|()| {
                    structured
                        .to_value()
                        .map_err(|error| crate::exact::unjudged(&error))
                }) {
                Err(reason) => Some(format!("it {reason}")),
                Ok(value) => {
                    output.structured_content = Some(structured);
                    match checks::validate(validator, value, deadline, cancel).await {
                        Ok((_, verdict)) => verdict.err().map(|violations| violations.to_string()),
                        Err(stop) => return stopped(binding, call_id, stop, true, time_limit),
                    }
                }
            },
        };
        if let Some(reason) = mismatch {
            return ToolResultEvent::failure(
                call_id,
                ErrorKind::OutputSchemaMismatch,
                format!(
                    "the result of tool \"{}\" does not match its output_schema: {reason}",
                    binding.name()
                ),
                true,
            );
        }
    }
    ToolResultEvent::success(call_id, output.content, output.structured_content)
}
