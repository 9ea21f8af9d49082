//! Escaping characters that a terminal (or a log viewer) would act on.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal raw: C0 controls (line breaks and tabs
/// included), DEL, C1 controls (which some terminals treat like ESC sequences), the
/// Unicode line and paragraph separators, and the invisible format characters that can
/// make text display in another order than it reads or hide text: bidi marks, embeddings,
/// overrides and isolates, zero-width characters, the BOM, interlinear annotation marks
/// and the tag characters.
fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{ad}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}'
    )
}

/// `text` with every unsafe character written as an escape: `\n`, `\r`, `\t` for the
/// common ones, `\x1b` for other ASCII controls and `\u{202e}` for the rest. The output
/// is one line that a terminal shows as text. It is for display, not reversible: a
/// backslash in the input is kept as it is.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() && is_unsafe(c) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text as serde_json writes it (compact or pretty) with the characters it leaves raw
/// inside strings but a terminal would act on (DEL, C1 controls, line separators, bidi
/// formatting) written as `\uXXXX` escapes. The JSON value is unchanged: those escapes
/// decode to the same text. C0 controls are left alone: serde_json escapes them inside
/// strings, so any in its output are the line breaks and indentation of pretty printing.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    let unsafe_in_string = |c: char| is_unsafe(c) && !c.is_ascii_control();
    if !json.chars().any(unsafe_in_string) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_in_string(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            terminal_safe("a path C:\\x and é"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn escapes_and_forged_lines_are_neutralised() {
        // OSC 52 (clipboard write), erase-line + carriage return, a forged second line.
        let hostile = "boom\u{1b}]52;c;aGVsbG8=\u{7}\u{1b}[2K\rmcp-call: ok\nfake";
        let safe = terminal_safe(hostile);
        assert!(!safe.chars().any(char::is_control), "{safe}");
        assert_eq!(
            safe,
            "boom\\x1b]52;c;aGVsbG8=\\x07\\x1b[2K\\rmcp-call: ok\\nfake"
        );
        assert_eq!(terminal_safe("a\\b\n"), "a\\b\\n");
        assert_eq!(terminal_safe("\u{9b}31m\u{202e}"), "\\u{9b}31m\\u{202e}");
        assert_eq!(
            terminal_safe("ok\u{61c}\u{e0068}\u{e0069}\u{200b} done"),
            "ok\\u{61c}\\u{e0068}\\u{e0069}\\u{200b} done"
        );
    }

    #[test]
    fn json_keeps_its_value_and_its_layout() {
        let value = serde_json::json!({"t": "x\u{9b}y\u{202e}z\u{2028}\u{1b}[2K\n"});
        let line = serde_json::to_string(&value).unwrap();
        let safe = json_safe(&line);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let safe = json_safe(&pretty);
        assert_eq!(safe.lines().count(), pretty.lines().count());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
    }
}
