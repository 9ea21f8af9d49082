//! What a client does with a request the server sends while answering one of ours.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, ErrorCode, RequestId};
use crate::mcp::methods;

use super::framing::Framing;
use super::outgoing::{Expect, Outgoing};
use super::violation::{NeedsInput, Violation};

/// A refusal of a server request: the JSON-RPC error to answer it with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// The error code.
    pub code: ErrorCode,
    /// Why.
    pub message: String,
}

impl Refusal {
    /// A refusal with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// What to do with one server request.
#[derive(Debug)]
pub(crate) enum Reaction {
    /// Answer it (a ping) and keep reading.
    Answer(Outgoing),
    /// Refuse it and keep reading (a request the client has no use for).
    Refuse(Outgoing),
    /// It asks for user input and the client declared it can give some: hand it to the
    /// driver's responder.
    Ask,
    /// It asks for user input the client cannot give: refuse it (when the era allows an
    /// answer at all) and fail the exchange with this message.
    NoInput(Option<Outgoing>, NeedsInput),
    /// The era allows no server request here: fail the exchange with this violation.
    Forbidden(Violation),
}

/// Whether `method` asks for user input (an elicitation, an LLM sample, the roots).
pub(crate) fn asks_for_input(method: &str) -> bool {
    matches!(
        method,
        methods::ELICITATION_CREATE | methods::SAMPLING_CREATE_MESSAGE | methods::ROOTS_LIST
    )
}

/// The reaction to server request `method` (id `id`) in `framing`, for a client that
/// declared (`answers_input`) or did not declare input capabilities.
///
/// Handshake era: a ping is answered, an input request goes to the responder or is
/// refused and fails the exchange, anything else is refused with -32601 and the exchange
/// goes on. 2026 era: servers may not send requests on a reply stream and clients never
/// POST answers, so an input request fails the exchange as needing input and anything
/// else fails it as a protocol error, at once rather than at the deadline.
pub(crate) fn react(
    framing: &Framing,
    answers_input: bool,
    id: &RequestId,
    method: &str,
) -> Reaction {
    let input = asks_for_input(method);
    match framing {
        Framing::Stateless(version) => {
            if input {
                Reaction::NoInput(None, NeedsInput::Request(method.to_owned()))
            } else {
                Reaction::Forbidden(Violation::ServerRequest {
                    method: method.to_owned(),
                    version: *version,
                })
            }
        }
        Framing::Handshake { .. } => {
            if method == methods::PING {
                let body = jsonrpc::encode_response(id, &serde_json::json!({})).unwrap_or_default();
                return Reaction::Answer(answer(framing, body));
            }
            if input && answers_input {
                return Reaction::Ask;
            }
            let refusal = refuse(
                framing,
                id,
                &Refusal::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("{method} is not supported: this client declared no such capability"),
                ),
            );
            if input {
                Reaction::NoInput(Some(refusal), NeedsInput::Request(method.to_owned()))
            } else {
                Reaction::Refuse(refusal)
            }
        }
    }
}

/// Our answer to server request `id`: its result.
pub(crate) fn respond(framing: &Framing, id: &RequestId, result: &RawValue) -> Outgoing {
    let body = jsonrpc::encode_response(id, result).unwrap_or_default();
    answer(framing, body)
}

/// Our refusal of server request `id`.
pub(crate) fn refuse(framing: &Framing, id: &RequestId, refusal: &Refusal) -> Outgoing {
    let body = jsonrpc::encode_error(Some(id), refusal.code, &refusal.message, None);
    answer(framing, body)
}

fn answer(framing: &Framing, body: Vec<u8>) -> Outgoing {
    Outgoing::new(
        "",
        body,
        framing.headers("", None, Vec::new()),
        Expect::Accepted,
    )
}

/// One request embedded in an `input_required` result (2026 era).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct InputRequest {
    /// The key its answer goes under in `inputResponses`.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// Its params, verbatim.
    pub params: Option<Box<RawValue>>,
}

/// `inputResponses` from the caller's answers, by key: a result as it is, a refusal as
/// an error object.
pub(super) fn input_responses(
    answers: Vec<(String, Result<Value, Refusal>)>,
) -> Map<String, Value> {
    answers
        .into_iter()
        .map(|(key, answer)| {
            let value = match answer {
                Ok(result) => result,
                Err(refusal) => serde_json::json!({
                    "error": {"code": refusal.code.0, "message": refusal.message}
                }),
            };
            (key, value)
        })
        .collect()
}
