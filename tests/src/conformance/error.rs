//! Errors of the conformance client.

use brain_mcp_transport::TransportError;

/// Why a step of a conformance scenario failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The command line or environment is not usable.
    #[error("usage: {0}")]
    Usage(String),
    /// The HTTP exchange failed.
    #[error("{method}: {source}")]
    Transport {
        /// The JSON-RPC method being sent.
        method: String,
        /// What the transport reported.
        #[source]
        source: Box<TransportError>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{method}: the server answered JSON-RPC error {code}: {message}")]
    Rpc {
        /// The JSON-RPC method that failed.
        method: String,
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
    },
    /// The server's reply could not be understood.
    #[error("{method}: {detail}")]
    Protocol {
        /// The JSON-RPC method being sent.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// A request did not finish in time.
    #[error("{method}: no answer within {seconds} s")]
    Timeout {
        /// The JSON-RPC method being sent.
        method: String,
        /// The deadline.
        seconds: u64,
    },
}

impl ClientError {
    /// A protocol error for `method`.
    pub(crate) fn protocol(method: &str, detail: impl Into<String>) -> Self {
        Self::Protocol {
            method: method.to_owned(),
            detail: detail.into(),
        }
    }
}
