//! `tools/call` result conversion on arbitrary JSON; see `brain_fuzz::convert`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brain_fuzz::convert::check(data));
