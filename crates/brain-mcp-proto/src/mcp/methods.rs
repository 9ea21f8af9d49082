//! Method names.

/// Handshake request (handshake era).
pub const INITIALIZE: &str = "initialize";
/// Sent by the client after a successful `initialize`.
pub const INITIALIZED: &str = "notifications/initialized";
/// Liveness check, either direction (handshake era).
pub const PING: &str = "ping";
/// Discovery request (2026-07-28).
pub const SERVER_DISCOVER: &str = "server/discover";
/// List tools.
pub const TOOLS_LIST: &str = "tools/list";
/// Call a tool.
pub const TOOLS_CALL: &str = "tools/call";
/// Progress notification.
pub const PROGRESS: &str = "notifications/progress";
/// Cancellation notification.
pub const CANCELLED: &str = "notifications/cancelled";
/// Log message notification.
pub const MESSAGE: &str = "notifications/message";
/// The tool list changed.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// Server asks the user for input.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// URL elicitation finished (2025-11-25).
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// Server asks the client's model for a completion.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Server asks for the client's roots.
pub const ROOTS_LIST: &str = "roots/list";
/// Set the server's log level (handshake era).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// A task's status (2025-11-25; the 2026 tasks extension).
pub const TASKS_GET: &str = "tasks/get";
/// A task's outcome, answered once it ends (2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// Stop a task.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// Answers to a task's questions (the 2026 tasks extension).
pub const TASKS_UPDATE: &str = "tasks/update";
