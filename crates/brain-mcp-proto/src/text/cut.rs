//! Bounding text to a byte size.

use std::borrow::Cow;

/// What marks a cut: the text goes on past what is shown.
pub const CUT_MARK: &str = "… [cut]";

/// `text` if it has at most `max` bytes; otherwise its longest prefix of at most
/// `max - CUT_MARK.len()` bytes that ends on a character boundary, followed by
/// [`CUT_MARK`]. The result never has more than `max` bytes (for `max` below the mark's
/// own length, only the mark's prefix that fits).
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let Some(room) = max.checked_sub(CUT_MARK.len()) else {
        return Cow::Owned(prefix(CUT_MARK, max).to_owned());
    };
    let mut out = String::with_capacity(max);
    out.push_str(prefix(text, room));
    out.push_str(CUT_MARK);
    Cow::Owned(out)
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary,
/// unmarked (for input bounds, where nothing is shown).
pub fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_text_is_kept() {
        assert!(matches!(cut("abc", 3), Cow::Borrowed("abc")));
    }

    #[test]
    fn long_text_is_cut_and_marked() {
        let text = "x".repeat(100);
        let out = cut(&text, 20);
        assert_eq!(out.len(), 20);
        assert!(out.ends_with(CUT_MARK));
        assert!(out.starts_with("xxxx"));
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let text = "é".repeat(50);
        let out = cut(&text, 30);
        assert!(out.len() <= 30);
        assert!(out.ends_with(CUT_MARK));
    }

    proptest! {
        #[test]
        fn never_longer_than_max(text in ".{0,200}", max in 0usize..120) {
            let out = cut(&text, max);
            prop_assert!(out.len() <= max.max(text.len().min(max)));
            prop_assert!(out.len() <= max || text.len() <= max);
            if text.len() <= max {
                prop_assert_eq!(out.as_ref(), text.as_str());
            }
        }
    }
}
