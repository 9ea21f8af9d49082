//! `brain_mcp_transport::sse`: no input panics, the outcome does not depend on how the
//! stream is split into chunks, and no event is larger than the decoder's limit.
//!
//! Input layout: two bytes of event limit (little endian; `0xFFFF` means 1 MiB), one
//! byte bounding the chunk sizes (`0` and `1` feed one byte at a time), then the stream.

use brain_mcp_transport::sse::{SseDecoder, SseError, SseEvent};

/// Bytes before the stream: the limit and the chunk bound.
pub const HEADER_LEN: usize = 3;

/// The limit a header of `0xFFFF` stands for.
const LARGE_LIMIT: usize = 1 << 20;

/// Everything a caller can observe after feeding a stream.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    events: Vec<SseEvent>,
    error: Option<SseError>,
    retry: Option<u64>,
    last_event_id: Option<String>,
}

/// Checks the decoder's properties on one fuzz input.
pub fn check(data: &[u8]) {
    let Some((header, stream)) = data.split_at_checked(HEADER_LEN) else {
        return;
    };
    let limit = match u16::from_le_bytes([header[0], header[1]]) {
        u16::MAX => LARGE_LIMIT,
        n => usize::from(n),
    };
    let whole = decode(limit, std::iter::once(stream));
    let bytewise = decode(limit, stream.chunks(1));
    assert_eq!(whole, bytewise, "one chunk vs one byte at a time");
    let split = decode(limit, Chunks::new(stream, header[2]));
    assert_eq!(
        whole, split,
        "one chunk vs chunks of up to {} bytes",
        header[2]
    );
    for event in &whole.events {
        let size =
            wire_size_at_least(&event.data) + event.event.as_deref().map_or(0, wire_size_at_least);
        assert!(
            size <= limit,
            "an event of {size} bytes passed the limit {limit}"
        );
    }
    if let Some(id) = &whole.last_event_id {
        assert!(
            wire_size_at_least(id) <= limit,
            "an id longer than the limit"
        );
    }
}

/// Feeds `chunks` to a fresh decoder, stopping at the first error.
fn decode<'a>(limit: usize, chunks: impl Iterator<Item = &'a [u8]>) -> Outcome {
    let mut decoder = SseDecoder::new(limit);
    let mut events = Vec::new();
    let mut error = None;
    for chunk in chunks {
        if let Err(e) = decoder.feed(chunk, &mut events) {
            error = Some(e);
            break;
        }
    }
    decoder.finish();
    Outcome {
        events,
        error,
        retry: decoder.retry(),
        last_event_id: decoder.last_event_id().map(str::to_owned),
    }
}

/// The fewest stream bytes `text` can have come from: the decoder replaces each
/// invalid UTF-8 sequence (one byte or more) with U+FFFD, which takes three.
fn wire_size_at_least(text: &str) -> usize {
    text.chars()
        .map(|c| {
            if c == char::REPLACEMENT_CHARACTER {
                1
            } else {
                c.len_utf8()
            }
        })
        .sum()
}

/// Splits a stream into chunks of 1 to `bound` bytes, sizes from a small PRNG.
struct Chunks<'a> {
    rest: &'a [u8],
    bound: u32,
    state: u32,
}

impl<'a> Chunks<'a> {
    fn new(stream: &'a [u8], bound: u8) -> Self {
        Self {
            rest: stream,
            bound: u32::from(bound.max(1)),
            // xorshift32 needs a non-zero state.
            state: 0x9E37_79B9 ^ u32::from(bound),
        }
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 17;
        self.state ^= self.state << 5;
        let size = 1 + (self.state % self.bound) as usize;
        let (chunk, rest) = self.rest.split_at(size.min(self.rest.len()));
        self.rest = rest;
        Some(chunk)
    }
}
