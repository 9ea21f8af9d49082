//! Client and server capabilities.
//!
//! Capability objects are open sets; sub-objects whose contents carry no
//! meaning beyond "present" are kept as [`Value`]s (usually `{}`).

use serde_json::{Map, Value};

use crate::wire::wire_struct;

/// The 2026 tasks extension's name, as capabilities' `extensions` list it.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

wire_struct! {
    /// What a client can do.
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// Non-standard capabilities.
        opt experimental: Option<Map<String, Value>> = "experimental",
        /// Roots support (deprecated in 2026-07-28).
        opt roots: Option<ListChangedCapability> = "roots",
        /// Sampling support (deprecated in 2026-07-28).
        opt sampling: Option<SamplingCapability> = "sampling",
        /// Elicitation support (2025-06-18+); `{}` means form mode only.
        opt elicitation: Option<ElicitationCapability> = "elicitation",
        /// Task support (2025-11-25 only), kept loosely typed.
        opt tasks: Option<Value> = "tasks",
        /// Extensions by identifier (2026-07-28).
        opt extensions: Option<Map<String, Value>> = "extensions",
    }
}

impl ClientCapabilities {
    /// These capabilities plus form-mode elicitation (`"elicitation": {}`).
    #[must_use]
    pub fn with_elicitation(mut self) -> Self {
        self.elicitation = Some(ElicitationCapability::default());
        self
    }
}

wire_struct! {
    /// A capability whose only flag is `listChanged`.
    #[derive(Default)]
    pub struct ListChangedCapability {
        /// Whether list-changed notifications are sent.
        opt list_changed: Option<bool> = "listChanged",
    }
}

wire_struct! {
    /// The client's `sampling` capability.
    #[derive(Default)]
    pub struct SamplingCapability {
        /// Context inclusion support (2025-11-25).
        opt context: Option<Value> = "context",
        /// Tool use in sampling (2025-11-25).
        opt tools: Option<Value> = "tools",
    }
}

wire_struct! {
    /// The client's `elicitation` capability.
    #[derive(Default)]
    pub struct ElicitationCapability {
        /// Form mode.
        opt form: Option<Value> = "form",
        /// URL mode (2025-11-25+).
        opt url: Option<Value> = "url",
    }
}

wire_struct! {
    /// What a server can do.
    #[derive(Default)]
    pub struct ServerCapabilities {
        /// Non-standard capabilities.
        opt experimental: Option<Map<String, Value>> = "experimental",
        /// Log messages (deprecated in 2026-07-28).
        opt logging: Option<Value> = "logging",
        /// Argument completion.
        opt completions: Option<Value> = "completions",
        /// Prompts.
        opt prompts: Option<ListChangedCapability> = "prompts",
        /// Resources.
        opt resources: Option<ResourcesCapability> = "resources",
        /// Tools.
        opt tools: Option<ListChangedCapability> = "tools",
        /// Tasks (2025-11-25 only), kept loosely typed.
        opt tasks: Option<Value> = "tasks",
        /// Extensions by identifier (2026-07-28).
        opt extensions: Option<Map<String, Value>> = "extensions",
    }
}

wire_struct! {
    /// The server's `resources` capability.
    #[derive(Default)]
    pub struct ResourcesCapability {
        /// Per-resource subscriptions.
        opt subscribe: Option<bool> = "subscribe",
        /// List-changed notifications.
        opt list_changed: Option<bool> = "listChanged",
    }
}
