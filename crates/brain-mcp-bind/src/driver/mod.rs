//! The one driver of the client core (`brain_mcp_proto::client`) over a [`Link`]: the
//! era probe, opening and ending a session, requests without side effects, the
//! `tools/list` pages and the call loop, each written once for HTTP servers and child
//! processes alike. Nothing here decides anything about the protocol: the core does, and
//! the driver moves its messages and does what it says.
//!
//! [`Link`]: crate::link::Link

mod call;
mod error;
mod opening;
mod pages;
mod probe;
mod request;
mod session;
mod start;
mod task;

pub(crate) use call::{Asker, Calling, call};
#[cfg(test)]
pub(crate) use error::NoEra;
pub(crate) use error::{Blame, Cause, DriverError, Step, rpc_text, safe};
pub(crate) use pages::{MAX_PAGES, list_tools};
pub(crate) use probe::{Probed, era_of, probe};
pub(crate) use request::CONTROL_BUDGET;
pub(crate) use session::{Channel, Cleanup, open_session};
pub(crate) use start::{StartError, StartFailure};
