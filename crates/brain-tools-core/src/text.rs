//! Bounding text that ends up in messages: violation messages, failure messages.

/// What marks a cut: the text went on past what is shown.
pub(crate) const CUT_MARK: &str = "… [cut]";

/// `text` cut to at most `max` bytes on a character boundary, ending with [`CUT_MARK`]
/// when anything was removed (the mark counts against `max`).
pub(crate) fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max.saturating_sub(CUT_MARK.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(CUT_MARK);
    text
}

/// Bytes `c` takes inside a JSON string as serde_json writes it.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if c < ' ' => 6,
        c => c.len_utf8(),
    }
}

/// `text` cut so that, written inside a JSON string, it takes at most `max` bytes: a
/// message of control characters (six bytes each once escaped) is bounded like any other.
/// Ends with [`CUT_MARK`] when anything was removed.
pub(crate) fn cut_json(mut text: String, max: usize) -> String {
    let mut used = 0;
    let room = max.saturating_sub(CUT_MARK.len());
    let mut end_at_room = None;
    for (i, c) in text.char_indices() {
        if end_at_room.is_none() && used + json_len(c) > room {
            end_at_room = Some(i);
        }
        used += json_len(c);
        if used > max {
            text.truncate(end_at_room.unwrap_or(i));
            text.push_str(CUT_MARK);
            return text;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_cuts_count_escapes() {
        let controls = "\u{1}".repeat(3000);
        let out = cut_json(controls, 4096);
        let escaped = serde_json::to_string(&out).unwrap();
        assert!(escaped.len() - 2 <= 4096, "{}", escaped.len());
        assert!(out.ends_with(CUT_MARK));
        assert_eq!(cut_json("plain".into(), 10), "plain");
        let quotes = "\"".repeat(100);
        assert!(serde_json::to_string(&cut_json(quotes, 50)).unwrap().len() - 2 <= 50);
    }

    #[test]
    fn cuts_on_boundaries_within_the_bound() {
        assert_eq!(cut("short".to_owned(), 10), "short");
        let out = cut("é".repeat(100), 50);
        assert!(out.len() <= 50, "{}", out.len());
        assert!(out.ends_with(CUT_MARK));
        assert!(out.starts_with('é'));
    }
}
