//! Feeds arbitrary bytes to every decoder of brain-mcp-proto.
//!
//! Run with `cargo +nightly fuzz run decode` from this directory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    brain_mcp_proto::fuzzing::decode_message(data);
});
