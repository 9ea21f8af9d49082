//! An incremental Server-Sent Events decoder.
//!
//! The decoder follows the WHATWG "event stream interpretation" rules: lines end with
//! LF, CR or CRLF (a CRLF split across two chunks is still one line end), a single
//! leading UTF-8 BOM is dropped, lines starting with `:` are comments, `data` lines are
//! joined with `\n`, an `id` containing NUL is ignored, `retry` accepts ASCII digits
//! only, and a blank line dispatches the event. Events whose data is empty are still
//! reported (servers use them to "prime" a stream with an id), so the caller can see
//! the id; [`SseEvent::data`] is then empty.
//!
//! Memory is bounded: a single event (all its lines, including the one being read) may
//! not exceed the byte limit given at construction.

use bytes::{Buf, Bytes, BytesMut};

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event` field, or `None` when the event had none (type "message").
    pub event: Option<String>,
    /// The `data` lines joined with `\n`; empty for a priming event.
    pub data: String,
    /// The stream's last event id at dispatch time (it persists across events).
    pub id: Option<String>,
}

/// A decoder error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event grew beyond the configured byte limit.
    #[error("an SSE event exceeds the per-event limit of {limit} bytes")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

/// The incremental decoder; feed it chunks, read events as they complete.
#[derive(Debug)]
pub struct SseDecoder {
    limit: usize,
    /// Bytes of the current, unterminated line.
    line: BytesMut,
    /// At the very start of the stream (a BOM may follow).
    at_start: bool,
    /// The previous chunk ended with CR: a leading LF of the next chunk is part of it.
    after_cr: bool,
    /// Bytes accumulated by the current event (fields plus the current line).
    event_bytes: usize,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<u64>,
    /// The event (possibly without data) has at least one field line.
    has_fields: bool,
}

impl SseDecoder {
    /// A decoder that rejects any event larger than `event_limit` bytes.
    pub fn new(event_limit: usize) -> Self {
        Self {
            limit: event_limit,
            line: BytesMut::new(),
            at_start: true,
            after_cr: false,
            event_bytes: 0,
            data: String::new(),
            has_data: false,
            event: None,
            last_id: None,
            retry: None,
            has_fields: false,
        }
    }

    /// The most recent valid `retry` value in milliseconds, if any was seen.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The stream's last event id (updated by `id` fields even without dispatch).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds one chunk and appends every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            if self.at_start {
                // Wait until we can tell whether the stream starts with a BOM.
                let bom = [0xEF_u8, 0xBB, 0xBF];
                let have = self.line.len();
                let need = bom.len() - have;
                let take = need.min(rest.len());
                if rest[..take] != bom[have..have + take] {
                    self.at_start = false;
                    // Not a BOM: the buffered prefix is ordinary line content, counted
                    // against the limit like the rest of the line.
                    let prefix = self.line.split();
                    self.push_line_bytes(&prefix)?;
                    continue;
                }
                self.line.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if self.line.len() == bom.len() {
                    self.line.clear();
                    self.at_start = false;
                }
                continue;
            }
            match memchr_eol(rest) {
                Some(pos) => {
                    self.push_line_bytes(&rest[..pos])?;
                    let is_cr = rest[pos] == b'\r';
                    rest = &rest[pos + 1..];
                    if is_cr {
                        if rest.is_empty() {
                            self.after_cr = true;
                        } else if rest[0] == b'\n' {
                            rest = &rest[1..];
                        }
                    }
                    let line = self.line.split().freeze();
                    self.process_line(line, out)?;
                }
                None => {
                    self.push_line_bytes(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// Prepares for a reconnected stream: drops partial lines and fields (and expects
    /// a possible BOM again) but keeps the last event id and retry value.
    pub fn restart(&mut self) {
        self.line.clear();
        self.at_start = true;
        self.after_cr = false;
        self.reset_event();
    }

    /// Signals the end of the stream. Per the SSE rules an unterminated final event is
    /// discarded, so this only resets the line state.
    pub fn finish(&mut self) {
        self.line.clear();
        self.reset_event();
    }

    fn push_line_bytes(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        self.event_bytes = self.event_bytes.saturating_add(bytes.len());
        if self.event_bytes > self.limit {
            return Err(SseError::EventTooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, mut line: Bytes, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        // Each line end counts one byte, so many empty fields still hit the limit.
        self.event_bytes = self.event_bytes.saturating_add(1);
        if self.event_bytes > self.limit {
            return Err(SseError::EventTooLarge { limit: self.limit });
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let name = line.split_to(colon);
                line.advance(1);
                if line.first() == Some(&b' ') {
                    line.advance(1);
                }
                (name, line)
            }
            None => (line, Bytes::new()),
        };
        let value = String::from_utf8_lossy(&value);
        match &name[..] {
            b"event" => {
                self.event = Some(value.into_owned());
                self.has_fields = true;
            }
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
                self.has_fields = true;
            }
            b"id" if !value.contains('\0') => {
                self.last_id = Some(value.into_owned()).filter(|v| !v.is_empty());
                self.has_fields = true;
            }
            b"retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Saturate absurd values instead of failing.
                self.retry = Some(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        // WHATWG dispatches only when data was set; we also report events that carried
        // an id or name but no data (priming events), so callers can track the id.
        if self.has_data || self.has_fields {
            out.push(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.last_id.clone(),
            });
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.has_fields = false;
        self.event = None;
        self.event_bytes = 0;
    }
}

fn memchr_eol(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n' || b == b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_chunks(chunks: &[&[u8]], limit: usize) -> Result<Vec<SseEvent>, SseError> {
        let mut d = SseDecoder::new(limit);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out)?;
        }
        Ok(out)
    }

    fn ev(data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_owned(),
            id: id.map(str::to_owned),
        }
    }

    #[test]
    fn line_endings_are_equivalent() {
        for sep in ["\n", "\r", "\r\n"] {
            let s = format!("data: a{sep}data:b{sep}{sep}id: 7{sep}data: c{sep}{sep}");
            let got = decode_chunks(&[s.as_bytes()], 1024).unwrap();
            assert_eq!(
                got,
                vec![ev("a\nb", None), ev("c", Some("7"))],
                "sep {sep:?}"
            );
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let got = decode_chunks(&[b"data: x\r", b"\n\r", b"\n"], 1024).unwrap();
        assert_eq!(got, vec![ev("x", None)]);
    }

    #[test]
    fn bom_comments_retry_and_event_names() {
        let s = b"\xEF\xBB\xBF: keep-alive\nretry: 1500\nretry: 1x\nevent: note\ndata\n\n";
        let mut d = SseDecoder::new(1024);
        let mut out = Vec::new();
        for b in s.iter() {
            d.feed(std::slice::from_ref(b), &mut out).unwrap();
        }
        assert_eq!(d.retry(), Some(1500));
        assert_eq!(
            out,
            vec![SseEvent {
                event: Some("note".into()),
                data: String::new(),
                id: None
            }]
        );
    }

    #[test]
    fn only_one_leading_bom_is_stripped() {
        let got = decode_chunks(&[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"], 1024).unwrap();
        // The second BOM makes the field name unknown, so nothing is dispatched.
        assert!(got.is_empty());
    }

    #[test]
    fn priming_event_keeps_id_and_id_with_nul_is_ignored() {
        let got = decode_chunks(&[b"id: p1\ndata:\n\nid: bad\0\ndata: x\n\n"], 1024).unwrap();
        assert_eq!(got, vec![ev("", Some("p1")), ev("x", Some("p1"))]);
    }

    #[test]
    fn a_partial_bom_counts_toward_the_limit_however_it_arrives() {
        // Found while writing the sse fuzz target's chunking property: bytes buffered as a
        // possible BOM in one chunk were not counted once the next chunk showed they were
        // line content, so a split stream could pass a limit the whole stream failed.
        let too_large = Err(SseError::EventTooLarge { limit: 2 });
        assert_eq!(decode_chunks(&[b"\xEF\xBBx\n"], 2), too_large);
        assert_eq!(decode_chunks(&[b"\xEF", b"\xBB", b"x\n"], 2), too_large);
        assert_eq!(decode_chunks(&[b"\xEF", b"\xBBx\n"], 2), too_large);
    }

    #[test]
    fn unterminated_event_is_not_dispatched() {
        let got = decode_chunks(&[b"data: a\n"], 1024).unwrap();
        assert!(got.is_empty());
    }

    #[test]
    fn event_limit_applies_while_reading() {
        let big = vec![b'x'; 100];
        let mut d = SseDecoder::new(64);
        let mut out = Vec::new();
        d.feed(b"data: ", &mut out).unwrap();
        let err = d.feed(&big, &mut out).unwrap_err();
        assert_eq!(err, SseError::EventTooLarge { limit: 64 });
        // Many small lines count too.
        let mut d = SseDecoder::new(64);
        let lines = "data: 0123456789\n".repeat(10);
        assert!(d.feed(lines.as_bytes(), &mut out).is_err());
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("data: a".to_owned()), Just("data".to_owned()), Just(":c".to_owned()),
                    Just("id: 1".to_owned()), Just("id".to_owned()), Just("retry: 5".to_owned()),
                    Just("event: e".to_owned()), Just("\r".to_owned()), Just("\n".to_owned()),
                    Just("\r\n".to_owned()), Just("\u{FEFF}".to_owned()), Just("data:  é".to_owned()),
                ],
                0..40,
            ),
            cuts in proptest::collection::vec(0usize..200, 0..10),
        ) {
            let stream: Vec<u8> = parts.concat().into_bytes();
            let whole = decode_chunks(&[&stream], 1 << 20).unwrap();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut prev = 0;
            for c in cuts {
                chunks.push(&stream[prev..c]);
                prev = c;
            }
            chunks.push(&stream[prev..]);
            let split = decode_chunks(&chunks, 1 << 20).unwrap();
            prop_assert_eq!(whole, split);
        }
    }
}
