//! Feeds arbitrary bytes to every decoder of brain-mcp-proto; the property is that no
//! input panics (see `brain_mcp_proto::fuzzing::decode_message`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brain_mcp_proto::fuzzing::decode_message(data));
