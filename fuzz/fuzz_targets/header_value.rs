//! `x-mcp-header` value encoding and decoding; see `brain_fuzz::header_value`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brain_fuzz::header_value::check(data));
