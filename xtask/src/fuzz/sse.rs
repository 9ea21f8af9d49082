//! Seeds for the `sse` target: each capture's received messages framed as an SSE stream,
//! the way the peers sent them, behind the target's input header.
//!
//! The header is the one `fuzz/src/sse.rs` reads: the event limit as two little-endian
//! bytes (`0xFFFF` stands for 1 MiB) and one byte bounding the chunk sizes.

use std::collections::BTreeSet;

use super::fixtures::Capture;

/// The largest limit the header can name.
const NO_LIMIT: u16 = u16::MAX;
/// A limit some captured messages exceed, so the error path has seeds too.
const SMALL_LIMIT: u16 = 512;

/// Three streams per capture: LF with a priming event; BOM, CRLF, a comment and data split
/// over several lines; and the first again under a limit small enough to fail. Plus each
/// received message alone as a one-event stream: small inputs run many times faster.
pub(super) fn seeds(captures: &[Capture]) -> BTreeSet<Vec<u8>> {
    let mut seeds = BTreeSet::new();
    for capture in captures {
        let received: Vec<&str> = capture
            .messages
            .iter()
            .filter(|m| !m.sent)
            .map(|m| m.text.as_str())
            .collect();
        if received.is_empty() {
            continue;
        }
        for message in &received {
            seeds.insert(seed(NO_LIMIT, 5, &stream(&[message], false)));
        }
        let plain = stream(&received, false);
        seeds.insert(seed(NO_LIMIT, 7, &plain));
        seeds.insert(seed(SMALL_LIMIT, 64, &plain));
        seeds.insert(seed(NO_LIMIT, 3, &stream(&received, true)));
    }
    seeds
}

/// The target's input: the header, then the stream.
pub(super) fn seed(limit: u16, chunk_bound: u8, stream: &str) -> Vec<u8> {
    let mut input = limit.to_le_bytes().to_vec();
    input.push(chunk_bound);
    input.extend_from_slice(stream.as_bytes());
    input
}

/// `messages` as SSE events with ids from 1. Plain: LF line ends after a priming event
/// (`id`, `retry`, empty `data`, as rmcp starts its streams). Otherwise: a BOM, CRLF line
/// ends, a comment, and each message's data split into lines after every comma (the
/// decoder rejoins them with `\n`).
pub(super) fn stream(messages: &[&str], crlf: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    if crlf {
        out.push_str("\u{FEFF}: keep-alive\r\n");
    } else {
        out.push_str("id: 0\nretry: 3000\ndata:\n\n");
    }
    for (i, message) in messages.iter().enumerate() {
        out.push_str(&format!("event: message{eol}id: {}{eol}", i + 1));
        let lines: Vec<&str> = if crlf {
            message.split_inclusive(',').collect()
        } else {
            vec![message]
        };
        for line in lines {
            out.push_str(&format!("data: {line}{eol}"));
        }
        out.push_str(eol);
    }
    out
}
