//! Reading the headers of a request the test server received.

use http::HeaderMap;

/// A header's value as text, when present and visible ASCII.
pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
