//! A message a peer sent, decoded once and owned: what a transport hands the client core.
//!
//! [`decode`](super::decode) borrows from the text it reads, which ties every message to its
//! buffer. A transport reads a reply once and hands the core one [`Inbound`] per message;
//! the core never decodes the envelope again, and only the part it needs (a result, some
//! params) is read further, once.

use serde_json::value::RawValue;

use super::{DecodeError, ErrorCode, Incoming, Message, RequestId, decode};

/// One JSON-RPC message, owned.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums)] // complete: JSON-RPC 2.0 has these four kinds of message
pub enum Inbound {
    /// A request from the peer.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its params, verbatim (`None` when absent or `null`).
        params: Option<Box<RawValue>>,
    },
    /// A notification from the peer.
    Notification {
        /// Its method.
        method: String,
        /// Its params, verbatim (`None` when absent or `null`).
        params: Option<Box<RawValue>>,
    },
    /// A successful response.
    Response {
        /// The id it answers.
        id: RequestId,
        /// The result, verbatim.
        result: Box<RawValue>,
    },
    /// An error response.
    Error {
        /// The id it answers; `None` when the peer could not read the request's id.
        id: Option<RequestId>,
        /// The error code.
        code: ErrorCode,
        /// The peer's message, as sent.
        message: String,
        /// `data`, verbatim, when present (a `null` counts as none).
        data: Option<Box<RawValue>>,
    },
}

impl Inbound {
    /// Decodes `text` (one message, or a batch as 2025-03-26 peers may send) into owned
    /// messages, in order.
    pub fn decode_all(text: &str) -> Result<Vec<Self>, DecodeError> {
        Ok(match decode(text.as_bytes())? {
            Incoming::Single(message) => vec![Self::from_message(&message)],
            Incoming::Batch(messages) => messages.iter().map(Self::from_message).collect(),
        })
    }

    /// The owned form of a borrowed message.
    pub fn from_message(message: &Message<'_>) -> Self {
        match message {
            Message::Request(r) => Self::Request {
                id: r.id.clone(),
                method: r.method.clone().into_owned(),
                params: r.params.map(RawValue::to_owned),
            },
            Message::Notification(n) => Self::Notification {
                method: n.method.clone().into_owned(),
                params: n.params.map(RawValue::to_owned),
            },
            Message::Response(r) => Self::Response {
                id: r.id.clone(),
                result: r.result.to_owned(),
            },
            Message::Error(e) => Self::Error {
                id: e.id.clone(),
                code: e.error.code,
                message: e.error.message.clone().into_owned(),
                data: e
                    .error
                    .data
                    .filter(|d| d.get() != "null")
                    .map(RawValue::to_owned),
            },
        }
    }

    /// Whether this is the answer to our request `id`: its response or error response, or
    /// an error response without an id (a peer that could not read a request cannot echo
    /// its id; on a link that carries one request at a time, that error is the answer).
    pub fn answers(&self, id: &RequestId) -> bool {
        match self {
            Self::Response { id: answered, .. } => answered == id,
            Self::Error { id: answered, .. } => answered.as_ref().is_none_or(|a| a == id),
            Self::Request { .. } | Self::Notification { .. } => false,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request { method, .. } | Self::Notification { method, .. } => Some(method),
            Self::Response { .. } | Self::Error { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_decode_gives_owned_messages() {
        let batch = r#"[{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}},
            {"jsonrpc":"2.0","id":7,"result":{"content":[]}},
            {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse","data":null}}]"#;
        let messages = Inbound::decode_all(batch).unwrap();
        assert_eq!(messages.len(), 3);
        let ours = RequestId::Number(7);
        assert!(!messages[0].answers(&ours));
        assert_eq!(messages[0].method(), Some("notifications/progress"));
        assert!(messages[1].answers(&ours));
        assert!(!messages[1].answers(&RequestId::Number(8)));
        assert!(
            matches!(&messages[1], Inbound::Response { result, .. } if result.get() == r#"{"content":[]}"#)
        );
        // An id-less error answers whatever was asked; `data: null` is no data.
        assert!(messages[2].answers(&ours));
        assert!(matches!(&messages[2], Inbound::Error { data: None, .. }));
        assert!(Inbound::decode_all("{}").is_err());
    }
}
