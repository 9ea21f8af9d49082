//! What a call tells the operator: its `tool_call` span, the one `info` line when it ends,
//! and the call metrics (docs/observability.md lists every name).
//!
//! The span is created here, before the pipeline's first check, with fields an executor
//! fills in from inside the call (`Span::current().record(..)`): the remote tool, the
//! server's origin, the protocol era, the MCP session and the exchange counts. Its names
//! are OpenTelemetry's where the GenAI conventions have one (docs/observability.md).

use std::fmt;
use std::time::Duration;

use tracing::Span;
use tracing::field::Empty;

use crate::binding::Binding;
use crate::event::ToolResultEvent;
use crate::executor::ToolCall;

/// Metric: calls ended, labelled `tool` and `outcome` (`ok`, `tool_error` or an error kind).
pub const CALLS: &str = "brain_tool_calls_total";
/// Metric: calls that ended in one of Brain's failures, labelled `kind`.
pub const FAILURES: &str = "brain_tool_call_failures_total";
/// Metric: call duration in seconds, from the first check to the result, labelled `tool`.
pub const DURATION: &str = "brain_tool_call_duration_seconds";

/// OpenTelemetry's name of a tool's span: `execute_tool {gen_ai.tool.name}`.
struct ExecuteTool<'a>(&'a str);

impl fmt::Display for ExecuteTool<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "execute_tool {}", self.0)
    }
}

/// The span of one call, with OpenTelemetry's GenAI names where they have one (an
/// `execute_tool` span: the tool, the call id, the Brain session as the conversation,
/// `error.type`). Tenant and session ids go in the span (logs), never in metric labels.
pub(crate) fn span(binding: &Binding, call: &ToolCall) -> Span {
    tracing::info_span!(
        "tool_call",
        otel.name = %ExecuteTool(binding.name()),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = binding.name(),
        gen_ai.tool.call.id = call.call_id.as_str(),
        gen_ai.conversation.id = call.session_id.as_str(),
        tenant = call.tenant.as_str(),
        trace_id = call.trace.as_ref().map(|t| t.trace_id()),
        remote_tool = Empty,
        server = Empty,
        era = Empty,
        mcp.session.id = Empty,
        exchanges = Empty,
        bytes_in = Empty,
        is_error = Empty,
        error.type = Empty,
        unknown_outcome = Empty,
        duration_ms = Empty,
    )
}

/// Records how the call ended on its span, writes the call's `info` line and counts it.
pub(crate) fn finished(span: &Span, binding: &Binding, result: &ToolResultEvent, took: Duration) {
    let kind = result.error.as_ref().map(|e| e.kind.as_str());
    let outcome = match (kind, result.is_error) {
        (Some(kind), _) => kind,
        (None, true) => "tool_error",
        (None, false) => "ok",
    };
    let millis = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
    span.record("is_error", result.is_error);
    span.record("duration_ms", millis);
    if outcome != "ok" {
        // A tool's own error is `tool_error`, as OpenTelemetry names it.
        span.record("error.type", outcome);
        span.record("otel.status_code", "error");
    }
    if let Some(unknown) = result.unknown_outcome {
        span.record("unknown_outcome", unknown);
    }
    tracing::info!(parent: span, outcome, duration_ms = millis, "tool call ended");
    // The binding's shared name: a label without a copy.
    let tool = binding.name.clone();
    metrics::counter!(CALLS, "tool" => tool.clone(), "outcome" => outcome).increment(1);
    if let Some(kind) = kind {
        metrics::counter!(FAILURES, "kind" => kind).increment(1);
    }
    metrics::histogram!(DURATION, "tool" => tool).record(took.as_secs_f64());
}
