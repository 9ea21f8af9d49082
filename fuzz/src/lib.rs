//! The properties the fuzz targets check, one module per target.
//!
//! Each `fuzz_targets/<name>.rs` is a few lines calling `<name>::check`; keeping the
//! properties here lets them share helpers and type-check with the rest of this crate.
//! Every `check` panics when a property fails, which libFuzzer reports as a crash.

pub mod convert;
pub mod header_value;
pub mod host_config;
pub mod sse;
