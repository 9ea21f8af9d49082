//! How a server broke the protocol, and what it asked for that a client without a user
//! cannot give: each a type to match on, whose `Display` is the message. Both are the
//! server's doing, and come after the request reached it.

use std::fmt;

use crate::version::ProtocolVersion;

/// How a server broke the protocol. The server's own words (a key, a status, a parser's
/// complaint about what it sent) are carried as text; cut them before showing them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The reply to a request is not a JSON-RPC response.
    NotAResponse,
    /// A server request where the era allows none (a 2026 reply stream).
    ServerRequest {
        /// Its method, as sent.
        method: String,
        /// The era's version.
        version: ProtocolVersion,
    },
    /// An `initialize` result that does not read as one (the parser's words).
    InvalidInitialize(String),
    /// `initialize` answered with a protocol version this client does not speak.
    UnsupportedVersion {
        /// The version, as sent.
        version: String,
        /// Why it is refused.
        detail: String,
    },
    /// A server request without an id, which cannot be answered.
    RequestWithoutId,
    /// The reply ended before the response came.
    ReplyEnded,
    /// A `tools/call` result that does not read as one (the parser's words).
    InvalidCallResult(String),
    /// A `resultType` this client does not know (as sent).
    UnsupportedResultType(String),
    /// Handshake-era `structuredContent` that is not an object (what it is instead).
    StructuredContent(String),
    /// A `tools/list` result that does not read as one (the parser's words).
    InvalidToolList(String),
    /// The server kept paginating past the client's limit of pages.
    TooManyPages(usize),
    /// An `input_required` result that does not read as one.
    InvalidInputRequired,
    /// One of its input requests does not read as one.
    InvalidInputRequest {
        /// The request's key, as sent.
        key: String,
        /// The parser's words.
        detail: String,
    },
    /// The server asked for input this many times in one call.
    TooManyInputRounds(usize),
    /// A task the call did not ask for.
    UnaskedTask,
    /// A task status that does not read as one (the parser's words).
    InvalidTaskStatus(String),
    /// A task id that is empty or longer than this many bytes.
    InvalidTaskId(usize),
    /// A task's `requestState` longer than this many bytes.
    RequestStateTooLong(usize),
    /// A task status this client does not know (as sent).
    UnknownTaskStatus(String),
    /// `tasks/get` answered with another task's status.
    OtherTask,
    /// A task's `input_required` status that does not read as one (the parser's words).
    InvalidInputRequiredTask(String),
    /// A task's result asked, this many times, for what it waited for.
    ResultAskedTooOften(usize),
    /// A task asked more than this many questions.
    TooManyQuestions(usize),
    /// The server cancelled the task before it finished.
    TaskCancelled,
    /// The task ended, and its status carries no outcome.
    NoOutcome,
    /// A task's result asks for input.
    TaskResultAsksInput,
    /// A task's result asks for what only a call may (a task of its own).
    TaskResultAsksCall,
    /// A failed task's error is not a JSON-RPC error.
    FailedTaskError,
    /// A step of the core this driver does not know (a newer core than the driver):
    /// the exchange cannot go on.
    UnknownStep(&'static str),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAResponse => f.write_str("the response is not a JSON-RPC response"),
            Self::ServerRequest { method, version } => write!(
                f,
                "the server sent a {method} request during a {version} exchange, where \
                 servers send no requests"
            ),
            Self::InvalidInitialize(e) => write!(f, "invalid initialize result: {e}"),
            Self::UnsupportedVersion { version, detail } => write!(
                f,
                "the server answered initialize with protocol version {version:?}: {detail}"
            ),
            Self::RequestWithoutId => f.write_str("a request without an id cannot be answered"),
            Self::ReplyEnded => f.write_str("the reply ended before the response arrived"),
            Self::InvalidCallResult(e) => write!(f, "invalid tools/call result: {e}"),
            Self::UnsupportedResultType(t) => write!(
                f,
                "the server answered with resultType {t:?}, which this client does not support"
            ),
            Self::StructuredContent(what) => write!(
                f,
                "structuredContent is {what}, not a JSON object as the handshake-era protocol \
                 requires"
            ),
            Self::InvalidToolList(e) => write!(f, "the result is not a tool list: {e}"),
            Self::TooManyPages(n) => write!(
                f,
                "the server kept paginating tools/list past {n} pages; giving up"
            ),
            Self::InvalidInputRequired => f.write_str("invalid input_required result"),
            Self::InvalidInputRequest { key, detail } => {
                write!(f, "input request {} is malformed: {detail}", quoted(key))
            }
            Self::TooManyInputRounds(n) => write!(
                f,
                "the server asked for input {n} times in one call; giving up"
            ),
            Self::UnaskedTask => {
                f.write_str("the server answered with a task the call did not ask for")
            }
            Self::InvalidTaskStatus(e) => write!(f, "invalid task status: {e}"),
            Self::InvalidTaskId(n) => write!(f, "the task id is empty or longer than {n} bytes"),
            Self::RequestStateTooLong(n) => {
                write!(f, "the task's requestState is longer than {n} bytes")
            }
            Self::UnknownTaskStatus(s) => write!(f, "unknown task status {}", quoted(s)),
            Self::OtherTask => {
                f.write_str("the server answered tasks/get with another task's status")
            }
            Self::InvalidInputRequiredTask(e) => write!(f, "invalid input_required task: {e}"),
            Self::ResultAskedTooOften(n) => write!(
                f,
                "the task's result was asked for {n} times while it waited for input"
            ),
            Self::TooManyQuestions(n) => write!(f, "the task asked more than {n} questions"),
            Self::TaskCancelled => f.write_str("the server cancelled the task before it finished"),
            Self::NoOutcome => f.write_str("the task ended but its status carries no outcome"),
            Self::TaskResultAsksInput => f.write_str("a task's result asks for input"),
            Self::TaskResultAsksCall => {
                f.write_str("the task's result asks for what only a call may")
            }
            Self::FailedTaskError => f.write_str("a failed task's error is not a JSON-RPC error"),
            Self::UnknownStep(what) => write!(f, "{what}: this client cannot go on"),
        }
    }
}

/// What the server needs that a client without a user cannot give.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NeedsInput {
    /// It sent a request for input (its method, as sent).
    Request(String),
    /// It answered a 2026 call `input_required`.
    Round,
    /// A task waits for input.
    Task,
}

impl fmt::Display for NeedsInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Request(method) => write!(
                f,
                "the server sent {method}: it needs user input this client cannot give"
            ),
            Self::Round => f.write_str(
                "the server answered input_required: it needs user input this client cannot give",
            ),
            Self::Task => f.write_str("the task waits for user input this client cannot give"),
        }
    }
}

/// A server's word for a message: whole and quoted when short, else only its length (a
/// cut could keep part of a secret that redaction no longer recognises).
pub(crate) fn quoted(text: &str) -> String {
    if text.len() <= 64 {
        format!("{text:?}")
    } else {
        format!("of {} bytes", text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_server_words_are_kept_out_of_the_message() {
        let long = "x".repeat(65);
        let shown = Violation::UnknownTaskStatus(long).to_string();
        assert_eq!(shown, "unknown task status of 65 bytes");
        let short = Violation::InvalidInputRequest {
            key: "q1".into(),
            detail: "missing method".into(),
        };
        assert_eq!(
            short.to_string(),
            "input request \"q1\" is malformed: missing method"
        );
    }
}
