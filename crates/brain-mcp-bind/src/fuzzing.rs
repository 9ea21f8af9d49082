//! Entry points for fuzzers (`fuzz/` in the repository). Not a stable API.
#![doc(hidden)]

use brain_mcp_proto::client::{Framing, check_result, read_result};
use brain_tools_core::ToolOutput;
use serde_json::value::RawValue;

/// Parses `bytes` as one JSON value and reads, checks and converts it as a `tools/call`
/// result, as a handshake-era session would and as the 2026 era would (which also allows
/// structured content that is not an object); returns the 2026 conversion.
///
/// `None` when the bytes are not JSON or the result is refused; must never panic.
pub fn convert_result(bytes: &[u8]) -> Option<ToolOutput> {
    let raw: &RawValue = serde_json::from_slice(bytes).ok()?;
    let [session, stateless] = brain_mcp_proto::fuzzing::framings();
    let _ = convert_in(raw, &session);
    convert_in(raw, &stateless)
}

fn convert_in(raw: &RawValue, framing: &Framing) -> Option<ToolOutput> {
    let result = read_result(raw).ok()??;
    let result = check_result(result, framing).ok()?;
    crate::convert::convert(result).ok()
}
