//! Why a server's child could not serve: it could not be started, or its session could
//! not be opened. Typed so the blame and the delivery follow from the variant: a child
//! never started was sent nothing; one that ran got `initialize`.

use super::error::DriverError;

/// Why no child was started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// The host is shutting down.
    #[error("the host is shutting down")]
    ShuttingDown,
    /// Crashes hold starts back past the call's deadline.
    #[error(
        "the server is restarting after {crashes} crash(es); the next start is after this \
         call's deadline"
    )]
    Restarting {
        /// Crashes over the server's life.
        crashes: u64,
    },
    /// The program could not be started (the reasons, outermost first).
    #[error("could not start the server: {0}")]
    Spawn(String),
}

/// Why a child could not serve an exchange.
#[derive(Debug)]
pub(crate) enum StartFailure {
    /// None could be started: nothing was sent.
    NotStarted(StartError),
    /// The child ended during `initialize` (how the link saw it end), with the last line
    /// of its stderr.
    Ended {
        /// The link's failure.
        during: Box<DriverError>,
        /// `; its stderr ends with: ...`, or empty.
        stderr: String,
    },
    /// The child answered `initialize` in a way that opens no session.
    Handshake(Box<DriverError>),
    /// The child did not answer `initialize` in time, with the last line of its stderr.
    Silent {
        /// `; its stderr ends with: ...`, or empty.
        stderr: String,
    },
}

impl StartFailure {
    /// Whether a child ran (and so was sent `initialize`).
    pub(crate) fn started(&self) -> bool {
        !matches!(self, Self::NotStarted(_))
    }
}
