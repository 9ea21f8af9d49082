//! What an executor implements and what it is given: the call, its binding and token, a
//! progress reporter, a cancellation signal and a send marker.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::arguments::Arguments;
use crate::binding::Binding;
use crate::event::{ContentBlock, ErrorKind, ProgressEvent};
use crate::exact::{ExactNumber, JsonText};
use crate::secret::Secret;
use crate::trace::TraceContext;

/// One call of a tool, as the host asks for it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The session's tenant; checked against the binding's `tenants`.
    pub tenant: String,
    /// The calling session.
    pub session_id: String,
    /// This call; also names its events.
    pub call_id: String,
    /// The arguments; checked against the binding's `input_schema`, sent as written.
    pub arguments: Arguments,
    /// A limit on this call shorter than the binding's `timeout_seconds` (a caller's own
    /// deadline). The pipeline uses the smaller of the two; a longer one changes nothing.
    pub timeout: Option<Duration>,
    /// The W3C trace context of the session that made the call; an executor passes it on
    /// (the MCP binding puts it in the request's `_meta`).
    pub trace: Option<TraceContext>,
}

impl ToolCall {
    /// A call by `tenant`'s session `session_id`, named `call_id`, with `arguments`
    /// (a [`Value`], or [`Arguments::from_json`] to send the model's text exactly).
    pub fn new(
        tenant: impl Into<String>,
        session_id: impl Into<String>,
        call_id: impl Into<String>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            session_id: session_id.into(),
            call_id: call_id.into(),
            arguments: arguments.into(),
            timeout: None,
            trace: None,
        }
    }

    /// The same call carrying `trace` (checked when it was built, so it is well formed).
    #[must_use]
    pub fn with_trace(mut self, trace: TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }

    /// The same call limited to `timeout`, when that is shorter than the binding's.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How long this call of `binding` may take: the binding's `timeout_seconds`, or the
    /// call's own limit when it is shorter.
    pub fn limit(&self, binding: &Binding) -> Duration {
        self.timeout
            .map_or(binding.timeout(), |own| own.min(binding.timeout()))
    }
}

/// Where live progress events go. Called in order, from the task running the call.
pub trait ProgressSink: Send + Sync {
    /// Delivers one progress event.
    fn progress(&self, event: ProgressEvent);
}

impl<F: Fn(ProgressEvent) + Send + Sync> ProgressSink for F {
    fn progress(&self, event: ProgressEvent) {
        self(event);
    }
}

/// A sink that drops every event, for callers that do not show progress.
#[derive(Clone, Copy, Debug, Default)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: a unit type
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn progress(&self, _event: ProgressEvent) {}
}

/// Turns an executor's progress reports into events for one call, dropping any report whose
/// progress does not increase (or is not a finite number).
pub struct ProgressReporter<'a> {
    call_id: &'a str,
    sink: &'a dyn ProgressSink,
    last: Mutex<Option<f64>>,
}

impl<'a> ProgressReporter<'a> {
    /// A reporter for call `call_id` that delivers to `sink`.
    pub fn new(call_id: &'a str, sink: &'a dyn ProgressSink) -> Self {
        Self {
            call_id,
            sink,
            last: Mutex::new(None),
        }
    }

    /// Reports progress; returns whether an event was delivered.
    pub fn report(
        &self,
        progress: ExactNumber,
        total: Option<ExactNumber>,
        message: Option<String>,
    ) -> bool {
        let value = progress.as_f64();
        if !value.is_finite() {
            return false;
        }
        {
            let mut last = self
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|last| value <= last) {
                return false;
            }
            *last = Some(value);
        }
        self.sink.progress(ProgressEvent {
            call_id: self.call_id.to_owned(),
            progress,
            total,
            message,
        });
        true
    }

    /// Reports one more step of work with `message`, whatever was reported before: the
    /// progress is the next whole number above the last one (1 when there was none). For
    /// work whose steps have no numbers of their own (a task's status messages).
    pub fn advance(&self, message: String) -> bool {
        /// The first whole number past which `f64` cannot hold every whole number.
        const EXACT_WHOLE: f64 = 9_007_199_254_740_992.0;
        let last = *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = match last {
            None => ExactNumber::from(1u64),
            // Finite (only finite values are kept) and below 2^53, so the cast is exact; a
            // negative last step starts at 1.
            Some(last) if last < EXACT_WHOLE => {
                ExactNumber::from((last.max(0.0).floor() as u64).saturating_add(1))
            }
            // Past 2^53 "one more" may read back as the same number: the next one up is
            // the smallest step that is still above.
            Some(last) => match ExactNumber::try_from(last.next_up()) {
                Ok(next) => next,
                Err(_) => return false,
            },
        };
        self.report(next, None, Some(message))
    }
}

impl fmt::Debug for ProgressReporter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressReporter")
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

/// Records whether the tool invocation may have left Brain. The pipeline reads it when the
/// deadline or a cancel interrupts the executor, to set `unknown_outcome`.
#[derive(Debug, Default)]
pub struct SendMarker(AtomicBool);

impl SendMarker {
    /// A marker that has not been set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Call right before sending the tool invocation itself (for MCP, the `tools/call`).
    pub fn mark_sent(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`Self::mark_sent`] was called.
    pub fn was_sent(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Everything an executor gets for one call.
///
/// The pipeline has already checked the tenant and the arguments and read the token. If the
/// deadline passes or the caller cancels, the pipeline drops the executor's future: cleanup
/// that must happen anyway (for MCP: `notifications/cancelled`, closing the session) belongs
/// in `Drop` and must not block. `cancel` fires too, for tasks the executor spawned.
#[derive(Debug)]
#[non_exhaustive]
pub struct ExecContext<'a> {
    /// The call.
    pub call: &'a ToolCall,
    /// The tool's binding.
    pub binding: &'a Binding,
    /// The bearer token from `token_env`; `None` when the binding names no variable.
    pub token: Option<Secret>,
    /// Where progress goes.
    pub progress: &'a ProgressReporter<'a>,
    /// Fires when the call is cancelled or times out.
    pub cancel: CancellationToken,
    /// Mark it right before sending the tool invocation.
    pub sent: &'a SendMarker,
    /// When the call's limit runs out (`timeout_seconds`, or the call's own shorter one). The pipeline drops the executor then;
    /// an executor that waits (a retry, a backoff) should not start a wait that ends later.
    pub deadline: tokio::time::Instant,
}

impl ExecContext<'_> {
    /// Shorthand for `self.sent.mark_sent()`.
    pub fn mark_sent(&self) {
        self.sent.mark_sent();
    }
}

/// What the tool returned.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// Content blocks for the model.
    pub content: Vec<ContentBlock>,
    /// The structured result, if any, as the tool wrote it.
    pub structured_content: Option<JsonText>,
    /// The tool reported an error itself (MCP `isError: true`).
    pub is_error: bool,
}

impl ToolOutput {
    /// What a tool returned: content blocks, a structured value, and whether the tool
    /// itself reported an error.
    pub fn new(
        content: Vec<ContentBlock>,
        structured_content: Option<JsonText>,
        is_error: bool,
    ) -> Self {
        Self {
            content,
            structured_content,
            is_error,
        }
    }

    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }

    /// The size `max_output_bytes` applies to: the bytes of the JSON of what the tool
    /// returned, its content blocks and its structured value, the structured value once.
    /// A text block that repeats the structured value as JSON (the copy MCP asks servers
    /// to send) counts only for the bytes it has beyond the value's compact JSON (its
    /// spacing, say), so padding a "copy" does not make it free. Counting stops once it
    /// passes `limit`, so the result is at most `limit + 1`.
    pub fn serialized_len(&self, limit: usize) -> usize {
        let mut counter = Counter { count: 0, limit };
        let structured_len = self
            .structured_content
            .as_ref()
            .map(|text| text.as_str().len());
        let copy = self.structured_copy();
        let mut fits = counter.add(b"[");
        for (i, block) in self.content.iter().enumerate() {
            fits = fits && (i == 0 || counter.add(b","));
            if Some(i) == copy {
                let mut size = Counter {
                    count: 0,
                    limit: usize::MAX,
                };
                let _ = serde_json::to_writer(&mut size, block);
                let excess = size.count.saturating_sub(structured_len.unwrap_or(0));
                fits = fits && counter.add_len(excess);
                continue;
            }
            fits = fits && serde_json::to_writer(&mut counter, block).is_ok();
        }
        fits = fits && counter.add(b"]") && counter.add_len(structured_len.unwrap_or(0));
        if fits {
            counter.count
        } else {
            limit.saturating_add(1)
        }
    }

    /// The index of the first text block that holds the structured value as JSON (of
    /// any type), if any: the same text once whitespace outside strings is dropped, or
    /// an equal parsed value when the structured value parses without losing a digit.
    /// Text much longer than the value's JSON is not read as a copy.
    pub fn structured_copy(&self) -> Option<usize> {
        let structured = self.structured_content.as_ref()?;
        let compact = structured.compact();
        // Parsed values compare only when parsing kept every digit of the structured one.
        let parsed = structured
            .to_value()
            .ok()
            .filter(|value| serde_json::to_string(value).is_ok_and(|written| written == compact));
        self.content.iter().position(|block| match block {
            ContentBlock::Text { text } => {
                text.len() <= compact.len().saturating_mul(8).saturating_add(1024)
                    && (crate::exact::compact(text) == compact
                        || parsed.as_ref().is_some_and(|parsed| {
                            serde_json::from_str::<Value>(text).is_ok_and(|v| &v == parsed)
                        }))
            }
            _ => false,
        })
    }

    /// Adds a text block holding the structured value as JSON, unless one is there: every
    /// structured result reaches the model as text too, with the digits the tool wrote.
    pub fn add_structured_copy(&mut self) {
        if let Some(structured) = &self.structured_content
            && self.structured_copy().is_none()
        {
            self.content.push(ContentBlock::text(structured.compact()));
        }
    }
}

/// Counts written bytes and fails once they pass the limit.
struct Counter {
    count: usize,
    limit: usize,
}

impl Counter {
    /// Counts `bytes`; false once over the limit.
    fn add(&mut self, bytes: &[u8]) -> bool {
        self.add_len(bytes.len())
    }

    /// Counts `n` bytes; false once over the limit.
    fn add_len(&mut self, n: usize) -> bool {
        self.count = self.count.saturating_add(n);
        self.count <= self.limit
    }
}

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count = self.count.saturating_add(buf.len());
        if self.count > self.limit {
            Err(std::io::Error::other("over the limit"))
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why an executor could not complete a call.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolFailure {
    /// The kind of failure.
    pub kind: ErrorKind,
    /// What went wrong. Never holds a secret.
    pub message: String,
    /// Whether the tool may have acted: false only when the invocation was never sent.
    pub unknown_outcome: bool,
}

impl ToolFailure {
    /// A failure before the invocation was sent (`unknown_outcome` false).
    pub fn before_send(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            unknown_outcome: false,
        }
    }

    /// A failure after the invocation may have been sent (`unknown_outcome` true).
    pub fn after_send(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            unknown_outcome: true,
        }
    }
}

/// Carries calls to tools. Runs only inside [`crate::run_call`], which enforces the rules.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Performs one call.
    async fn execute(&self, ctx: ExecContext<'_>) -> Result<ToolOutput, ToolFailure>;
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn advancing_goes_on_from_any_progress_reported_before() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: ProgressEvent| seen.lock().unwrap().push(event);
        let reporter = ProgressReporter::new("c1", &sink);
        assert!(reporter.advance("first".into()));
        assert!(reporter.report(ExactNumber::try_from(2.5).unwrap(), None, None));
        assert!(reporter.advance("after 2.5".into()));
        assert!(reporter.report(ExactNumber::from(40_u64), None, None));
        assert!(reporter.advance("after 40".into()));
        let seen = seen.into_inner().unwrap();
        let shown: Vec<(String, Option<String>)> = seen
            .into_iter()
            .map(|e| (e.progress.to_string(), e.message))
            .collect();
        assert_eq!(
            shown,
            [
                ("1".into(), Some("first".into())),
                ("2.5".into(), None),
                ("3".into(), Some("after 2.5".into())),
                ("40".into(), None),
                ("41".into(), Some("after 40".into())),
            ]
        );
    }

    #[test]
    fn advancing_past_the_exact_whole_numbers_still_goes_up() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: ProgressEvent| seen.lock().unwrap().push(event);
        let reporter = ProgressReporter::new("c1", &sink);
        let huge = ExactNumber::parse("9007199254740993").unwrap();
        assert!(reporter.report(huge, None, None));
        assert!(reporter.advance("one".into()));
        assert!(reporter.advance("two".into()));
        // The largest finite number has nothing above it: the step is dropped, not wrapped.
        let top = ExactNumber::try_from(f64::MAX).unwrap();
        assert!(reporter.report(top, None, None));
        assert!(!reporter.advance("past the top".into()));
        let values: Vec<f64> = seen
            .into_inner()
            .unwrap()
            .iter()
            .take(3)
            .map(|e| e.progress.as_f64())
            .collect();
        assert_eq!(values.len(), 3);
        assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    }
}
