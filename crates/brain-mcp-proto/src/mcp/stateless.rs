//! 2026-07-28 specifics: `input_required` results and the error `data` types.

use serde_json::Map;
use serde_json::value::RawValue;

use crate::wire::wire_struct;

use super::{ClientCapabilities, ElicitRequestParams, Meta, ResultType};

wire_struct! {
    /// An interim result: the server needs input before it can finish.
    ///
    /// Retry the same request with a new id, `inputResponses` keyed like
    /// `input_requests`, and `request_state` echoed exactly when present.
    pub struct InputRequiredResult {
        /// Always `input_required` for this type.
        opt result_type: Option<ResultType> = "resultType",
        /// What the server asks for, by key.
        opt input_requests: Option<Map<String, serde_json::Value>> = "inputRequests",
        /// Opaque state to echo byte for byte.
        opt request_state: Option<String> = "requestState",
        /// Metadata.
        opt meta: Option<Meta> = "_meta",
    }
}

impl InputRequiredResult {
    /// The input requests decoded one by one; each entry keeps its key.
    pub fn requests(&self) -> Vec<(String, Result<InputRequest, serde_json::Error>)> {
        self.input_requests
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), serde_json::from_value(v.clone())))
            .collect()
    }
}

wire_struct! {
    /// One embedded request: a method and its params, without envelope.
    pub struct InputRequest {
        /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
        req method: String = "method",
        /// The params, verbatim.
        opt params: Option<Box<RawValue>> = "params",
    }
}

wire_struct! {
    /// `data` of a -32021 error.
    pub struct MissingRequiredClientCapabilityData {
        /// The capabilities the request should have declared.
        req required_capabilities: ClientCapabilities = "requiredCapabilities",
    }
}

wire_struct! {
    /// `data` of a -32022 error (and of -32602 "unsupported version" from handshake servers).
    pub struct UnsupportedProtocolVersionData {
        /// Versions the server speaks.
        def supported: Vec<String> = "supported",
        /// The version that was asked for.
        opt requested: Option<String> = "requested",
    }
}

wire_struct! {
    /// `data` of a -32020 error: the specification defines no members, so
    /// whatever a server sends is kept in `extra`.
    #[derive(Default)]
    pub struct HeaderMismatchData {
    }
}

wire_struct! {
    /// `data` of a -32042 error (2025-11-25): URL elicitations to complete first.
    pub struct UrlElicitationRequiredData {
        /// The URL-mode elicitations.
        def elicitations: Vec<ElicitRequestParams> = "elicitations",
    }
}
