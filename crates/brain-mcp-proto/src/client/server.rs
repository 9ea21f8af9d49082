//! A server's life, beside a call's: what a server of each kind does for the exchanges of
//! an era (its health is [`super::health`]). Drivers ask here instead of branching on the
//! era themselves.

use super::framing::Framing;

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerKind {
    /// Over HTTP.
    Http,
    /// As a child process the host runs, over its stdin and stdout.
    Process,
}

/// Where a server's exchanges (a call, a listing) run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sessions {
    /// Each exchange opens a session of its own and ends it (`DELETE`): the handshake era
    /// over HTTP.
    PerExchange,
    /// Each exchange takes a child whose session is already open, from a pool kept ready
    /// in the background, and the child ends with it: the handshake era over child
    /// processes, where a session is a process.
    PooledChild,
    /// Every exchange shares the server: self-describing requests over HTTP, one child
    /// that every call shares (the 2026 era).
    Shared,
}

impl Framing {
    /// Where the exchanges of this framing's era run on a server of `kind`.
    pub fn sessions(&self, kind: ServerKind) -> Sessions {
        match (self, kind) {
            (Self::Handshake { .. }, ServerKind::Http) => Sessions::PerExchange,
            (Self::Handshake { .. }, ServerKind::Process) => Sessions::PooledChild,
            (Self::Stateless(_), _) => Sessions::Shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::ProtocolVersion;

    #[test]
    fn a_session_is_a_request_pair_over_http_and_a_process_over_stdio() {
        let before = Framing::before_session();
        assert_eq!(before.sessions(ServerKind::Http), Sessions::PerExchange);
        assert_eq!(before.sessions(ServerKind::Process), Sessions::PooledChild);
        let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
        for kind in [ServerKind::Http, ServerKind::Process] {
            assert_eq!(stateless.sessions(kind), Sessions::Shared);
        }
    }
}
