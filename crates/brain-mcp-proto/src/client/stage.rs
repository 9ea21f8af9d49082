//! The stages of a client's work with a server, named as messages name them: the core
//! owns the method names, so a driver that reports where a failure happened asks here.

use std::fmt;

use crate::mcp::methods;

/// Which stage of the work with a server a message or a failure belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::exhaustive_enums)] // complete: the stages a client goes through
pub enum Stage {
    /// Learning the era (`server/discover`), or starting a child to ask.
    Probe,
    /// Opening a session: `initialize` and `notifications/initialized`, or a child.
    Handshake,
    /// One page of `tools/list` (numbered from 1).
    List(usize),
    /// The `tools/call` itself.
    Call,
    /// Following the task a `tools/call` started (`tasks/get`, `tasks/result`): the tool
    /// runs whatever happens to these requests.
    Task,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Probe => write!(
                f,
                "{} (learning the protocol era)",
                methods::SERVER_DISCOVER
            ),
            Self::Handshake => f.write_str(methods::INITIALIZE),
            Self::List(page) => write!(f, "{} (page {page})", methods::TOOLS_LIST),
            Self::Call => f.write_str(methods::TOOLS_CALL),
            Self::Task => write!(
                f,
                "following the task ({}, {})",
                methods::TASKS_GET,
                methods::TASKS_RESULT
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_read_as_their_methods() {
        assert_eq!(
            Stage::Probe.to_string(),
            "server/discover (learning the protocol era)"
        );
        assert_eq!(Stage::Handshake.to_string(), "initialize");
        assert_eq!(Stage::List(3).to_string(), "tools/list (page 3)");
        assert_eq!(Stage::Call.to_string(), "tools/call");
        assert_eq!(
            Stage::Task.to_string(),
            "following the task (tasks/get, tasks/result)"
        );
    }
}
