//! The client core's tests: every decision, with no socket, no runtime and no clock.

mod call;
mod era;
mod handshake;
mod health;
mod listing;
mod stdio;
mod task;

use serde_json::Value;

use super::Identity;
use crate::mcp::Implementation;

fn identity() -> Identity {
    Identity::new(Implementation::new("brain-test", "1.0"))
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// One message as a link hands it to the core: decoded once.
fn msg(text: &str) -> crate::jsonrpc::Inbound {
    let mut all = crate::jsonrpc::Inbound::decode_all(text).unwrap();
    assert_eq!(all.len(), 1, "one message");
    all.remove(0)
}
