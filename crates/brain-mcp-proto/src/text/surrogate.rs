//! Repairing JSON text that holds half of a UTF-16 surrogate pair.

/// The escape that replaces a lone surrogate: U+FFFD REPLACEMENT CHARACTER.
const REPLACEMENT: &str = "\\uFFFD";

/// `json` with every `\uD800`..`\uDFFF` escape that is not half of a valid pair replaced
/// by `\uFFFD`; `None` when there is none (the text is then left to the parser as it is).
///
/// JavaScript's `JSON.stringify` writes lone surrogates as such escapes, for example when
/// a server cut a string inside an emoji; strict JSON parsers, serde_json among them,
/// refuse the whole message. Only escapes are affected: a backslash can only appear inside
/// a string in JSON, and every escape is stepped over whole, so `\\ud83d` (an escaped
/// backslash followed by the letters `ud83d`) is left alone. Linear in the text.
pub fn repair_lone_surrogates(json: &str) -> Option<String> {
    // Every surrogate escape contains `\u`; a substring search finds most texts free of
    // them faster than the walk below.
    if !json.contains("\\u") {
        return None;
    }
    let bytes = json.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_unit(bytes, i) else {
            // `\"`, `\\`, `\n`, ... (or a broken escape the parser will report).
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match escape_unit(bytes, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let buf = out.get_or_insert_with(|| String::with_capacity(json.len()));
            buf.push_str(&json[copied..i]);
            buf.push_str(REPLACEMENT);
            copied = i + 6;
        }
        i += 6;
    }
    let mut buf = out?;
    buf.push_str(&json[copied..]);
    Some(buf)
}

/// The code unit of a `\uXXXX` escape starting at `at`, if there is one.
fn escape_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(json: &str) -> String {
        let repaired = repair_lone_surrogates(json).unwrap_or_else(|| json.to_owned());
        serde_json::from_str(&repaired).unwrap()
    }

    #[test]
    fn lone_halves_become_replacement_characters() {
        assert!(serde_json::from_str::<String>(r#""cut \ud83d""#).is_err());
        assert_eq!(decoded(r#""cut \ud83d""#), "cut \u{fffd}");
        assert_eq!(decoded(r#""\ude00 x""#), "\u{fffd} x");
        assert_eq!(decoded(r#""\uD83D\uD83D\uDE00""#), "\u{fffd}😀");
        assert_eq!(decoded(r#""\ud83d\n""#), "\u{fffd}\n");
    }

    #[test]
    fn valid_text_is_untouched() {
        for json in [
            r#""\ud83d\ude00""#,
            r#""plain""#,
            r#""\\ud83d""#,
            r#""\u00e9\"\\""#,
            r#"{"a":"\ud83d\ude00","b":[1,2]}"#,
        ] {
            assert_eq!(repair_lone_surrogates(json), None, "{json}");
        }
        assert_eq!(decoded(r#""\\ud83d""#), "\\ud83d");
    }

    #[test]
    fn broken_escapes_are_left_to_the_parser() {
        assert_eq!(repair_lone_surrogates(r#""\u12""#), None);
        assert_eq!(repair_lone_surrogates("\"\\"), None);
    }
}
