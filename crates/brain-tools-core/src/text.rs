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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_boundaries_within_the_bound() {
        assert_eq!(cut("short".to_owned(), 10), "short");
        let out = cut("é".repeat(100), 50);
        assert!(out.len() <= 50, "{}", out.len());
        assert!(out.ends_with(CUT_MARK));
        assert!(out.starts_with('é'));
    }
}
