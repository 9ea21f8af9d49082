//! `HostConfig::load` on arbitrary text; see `brain_fuzz::host_config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brain_fuzz::host_config::check(data));
