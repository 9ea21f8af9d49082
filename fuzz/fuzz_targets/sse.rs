//! The SSE decoder on arbitrary bytes in arbitrary chunkings; see `brain_fuzz::sse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brain_fuzz::sse::check(data));
