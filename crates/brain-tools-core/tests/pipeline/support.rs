//! The recording executor and helpers both test files share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) use async_trait::async_trait;
use brain_tools_core::{
    Binding, ErrorKind, ExecContext, NoProgress, Secret, SecretError, ToolCall, ToolExecutor,
    ToolFailure, ToolOutput, ToolResultEvent, run_call_with,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub(crate) fn binding(extra: Value) -> Binding {
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

pub(crate) fn call(tenant: &str, arguments: Value) -> ToolCall {
    ToolCall::new(tenant, "s1", "c1", arguments)
}

/// What the executor does once called.
#[derive(Clone)]
pub(crate) enum Behaviour {
    Return(Result<ToolOutput, ToolFailure>),
    /// Report these progress values, then return text.
    Progress(Vec<f64>),
    /// Wait forever, optionally after marking the invocation sent.
    Hang {
        mark_sent: bool,
    },
}

/// Records every call it receives, the cancel token the last one was given, and
/// whether its future was dropped unfinished.
pub(crate) struct Recorder {
    pub(crate) behaviour: Behaviour,
    pub(crate) calls: Mutex<Vec<(ToolCall, Option<String>)>>,
    pub(crate) cancel: Mutex<Option<CancellationToken>>,
    pub(crate) dropped_unfinished: Arc<AtomicBool>,
}

impl Recorder {
    pub(crate) fn new(behaviour: Behaviour) -> Self {
        Self {
            behaviour,
            calls: Mutex::new(Vec::new()),
            cancel: Mutex::new(None),
            dropped_unfinished: Arc::new(AtomicBool::new(false)),
        }
    }

    pub(crate) fn returning(output: ToolOutput) -> Self {
        Self::new(Behaviour::Return(Ok(output)))
    }

    pub(crate) fn call_count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    /// The cancel token the last call was given, as an executor that spawned work
    /// bound to the call would keep it.
    pub(crate) fn kept_cancel(&self) -> CancellationToken {
        self.cancel
            .lock()
            .unwrap()
            .clone()
            .expect("the executor ran")
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
        *self.cancel.lock().unwrap() = Some(ctx.cancel.clone());
        let mut flag = DropFlag(self.dropped_unfinished.clone(), false);
        let result = match &self.behaviour {
            Behaviour::Return(result) => result.clone(),
            Behaviour::Progress(values) => {
                for value in values {
                    let number = brain_tools_core::ExactNumber::try_from(*value).unwrap();
                    ctx.progress.report(number, Some(10_u64.into()), None);
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

pub(crate) fn tokens(var: &str) -> Result<Secret, SecretError> {
    match var {
        "GOOD_TOKEN" => Ok(Secret::new("s3cr3t-value")),
        "EMPTY_TOKEN" => Err(SecretError::Empty(var.to_owned())),
        _ => Err(SecretError::Missing(var.to_owned())),
    }
}

pub(crate) async fn run(binding: &Binding, call: ToolCall, executor: &Recorder) -> ToolResultEvent {
    run_cancellable(binding, call, executor, &CancellationToken::new()).await
}

/// [`run`] under the caller's `cancel`.
pub(crate) async fn run_cancellable(
    binding: &Binding,
    call: ToolCall,
    executor: &Recorder,
    cancel: &CancellationToken,
) -> ToolResultEvent {
    run_call_with(binding, call, executor, &NoProgress, cancel, &tokens).await
}

pub(crate) fn assert_failure(result: &ToolResultEvent, kind: ErrorKind, unknown: bool) -> String {
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.error_kind(), Some(kind), "{result:?}");
    assert_eq!(result.unknown_outcome, Some(unknown), "{result:?}");
    assert!(result.content.is_empty());
    assert_eq!(result.call_id, "c1");
    result.error.as_ref().unwrap().message.clone()
}
