//! Entry points for fuzzers (`fuzz/` in the repository). Not a stable API.
#![doc(hidden)]

use brain_tools_core::ToolOutput;
use serde_json::value::RawValue;

/// Parses `bytes` as one JSON value and converts it as a `tools/call` result.
///
/// `None` when the bytes are not JSON or the result is refused; must never panic.
pub fn convert_result(bytes: &[u8]) -> Option<ToolOutput> {
    let raw: &RawValue = serde_json::from_slice(bytes).ok()?;
    crate::convert::convert(raw).ok()
}
