//! Borrowed JSON-RPC message types.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::{ErrorCode, RequestId};

/// A request: it has an id and expects a response.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 fixes these members
pub struct Request<'a> {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The parameters, verbatim; `None` when absent or `null`.
    pub params: Option<&'a RawValue>,
}

/// A notification: a method call without an id, never answered.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 fixes these members
pub struct Notification<'a> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// The parameters, verbatim; `None` when absent or `null`.
    pub params: Option<&'a RawValue>,
}

/// A successful response.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 fixes these members
pub struct Response<'a> {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result, verbatim (any JSON value; MCP results are objects).
    pub result: &'a RawValue,
}

/// An error response.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 fixes these members
pub struct ErrorResponse<'a> {
    /// The id of the request this answers. `None` when the id was missing,
    /// `null`, or not a valid id at all (the peer could not read the request):
    /// such an error must never be matched to a pending request.
    pub id: Option<RequestId>,
    /// The error itself.
    pub error: ErrorObject<'a>,
}

/// The `error` member of an error response.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 fixes these members
pub struct ErrorObject<'a> {
    /// The error code.
    pub code: ErrorCode,
    /// The human-readable message.
    pub message: Cow<'a, str>,
    /// Extra data, verbatim, if any (`null` is kept as `Some`).
    pub data: Option<&'a RawValue>,
}

/// Any single JSON-RPC message.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: JSON-RPC 2.0 has these four kinds of message
pub enum Message<'a> {
    /// A request.
    Request(Request<'a>),
    /// A notification.
    Notification(Notification<'a>),
    /// A successful response.
    Response(Response<'a>),
    /// An error response.
    Error(ErrorResponse<'a>),
}

impl<'a> Message<'a> {
    /// The id of a request, response or error response (`None` for
    /// notifications and id-less errors).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Request(r) => Some(&r.id),
            Self::Response(r) => Some(&r.id),
            Self::Error(e) => e.id.as_ref(),
            Self::Notification(_) => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request(r) => Some(&r.method),
            Self::Notification(n) => Some(&n.method),
            Self::Response(_) | Self::Error(_) => None,
        }
    }

    /// The params of a request or notification.
    pub fn params(&self) -> Option<&'a RawValue> {
        match self {
            Self::Request(r) => r.params,
            Self::Notification(n) => n.params,
            Self::Response(_) | Self::Error(_) => None,
        }
    }

    /// A short word for the kind of message, for logs and errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Request(_) => "request",
            Self::Notification(_) => "notification",
            Self::Response(_) => "response",
            Self::Error(_) => "error response",
        }
    }

    /// True for responses and error responses.
    pub fn is_response(&self) -> bool {
        matches!(self, Self::Response(_) | Self::Error(_))
    }
}

/// What [`decode`](super::decode) found: one message or a batch.
#[derive(Debug, Clone)]
#[allow(clippy::exhaustive_enums, clippy::exhaustive_structs)] // complete: a message arrives alone or in a batch
pub enum Incoming<'a> {
    /// A single message (the only form since 2025-06-18).
    Single(Message<'a>),
    /// A non-empty batch (allowed on receive for 2025-03-26 peers).
    Batch(Vec<Message<'a>>),
}

impl<'a> Incoming<'a> {
    /// The messages in order, whatever the form.
    pub fn into_messages(self) -> Vec<Message<'a>> {
        match self {
            Self::Single(m) => vec![m],
            Self::Batch(ms) => ms,
        }
    }

    /// How many messages arrived.
    pub fn len(&self) -> usize {
        match self {
            Self::Single(_) => 1,
            Self::Batch(ms) => ms.len(),
        }
    }

    /// Always false: an empty batch is a decode error. Present for API symmetry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> IntoIterator for Incoming<'a> {
    type Item = Message<'a>;
    type IntoIter = std::vec::IntoIter<Message<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_messages().into_iter()
    }
}
