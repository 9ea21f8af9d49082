//! Entry points for fuzzers (`fuzz/` in the repository). Not a stable API.
#![doc(hidden)]

use brain_mcp_proto::client::Era;
use brain_mcp_proto::version::ProtocolVersion;
use brain_tools_core::ToolOutput;
use serde_json::value::RawValue;

/// Parses `bytes` as one JSON value and converts it as a `tools/call` result, as a
/// handshake-era session would and as the 2026 era would (which also allows structured
/// content that is not an object); returns the 2026 conversion.
///
/// `None` when the bytes are not JSON or the result is refused; must never panic.
pub fn convert_result(bytes: &[u8]) -> Option<ToolOutput> {
    let raw: &RawValue = serde_json::from_slice(bytes).ok()?;
    let _ = crate::convert::convert_raw(raw, Era::Handshake);
    crate::convert::convert_raw(raw, Era::Stateless(ProtocolVersion::V2026_07_28)).ok()
}
