//! Notification params.

use serde_json::Value;

use crate::jsonrpc::RequestId;
use crate::wire::wire_struct;

use super::{LoggingLevel, Meta, ProgressToken};

wire_struct! {
    /// Params of `notifications/progress`.
    pub struct ProgressParams {
        /// The token from the request's `_meta.progressToken`.
        req progress_token: ProgressToken = "progressToken",
        /// Progress so far; increases with every notification.
        req progress: f64 = "progress",
        /// Total, when known.
        opt total: Option<f64> = "total",
        /// Human-readable status (2025-03-26+).
        opt message: Option<String> = "message",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Params of `notifications/cancelled`.
    pub struct CancelledParams {
        /// The request being cancelled (optional only for 2025-11-25 tasks).
        opt request_id: Option<RequestId> = "requestId",
        /// Why.
        opt reason: Option<String> = "reason",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Params of `notifications/message` (a log line from the server).
    pub struct LoggingMessageParams {
        /// Severity.
        req level: LoggingLevel = "level",
        /// Logger name.
        opt logger: Option<String> = "logger",
        /// Any JSON payload (a `null` payload reads as `None`).
        opt data: Option<Value> = "data",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

wire_struct! {
    /// Params of `logging/setLevel` (handshake era).
    pub struct SetLevelParams {
        /// The least severe level the server should send.
        req level: LoggingLevel = "level",
        /// Request metadata.
        opt meta: Option<super::RequestMeta> = "_meta",
    }
}
