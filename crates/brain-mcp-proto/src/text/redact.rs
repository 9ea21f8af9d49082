//! Removing a secret from text a peer sent back.

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// `text` with every occurrence of `secret` replaced by [`REDACTED`].
///
/// A server can reflect a bearer token anywhere: in an error message, a challenge, a
/// redirect's host name (where it is lower-cased), a URL (where it is percent-encoded,
/// wholly or in part) or a JSON body (where any character may be written as an escape,
/// `\/` for `/` as PHP does by default, or `\u0073` for `s`). So this matches the secret
/// as written and as read once `%XX` and JSON escapes are decoded, both ignoring ASCII
/// case. Runs in time linear in `text` (no backtracking whatever the input), and borrows
/// when there is nothing to replace. An empty secret changes nothing.
pub fn redact<'a>(text: &'a str, secret: &str) -> Cow<'a, str> {
    if secret.is_empty() {
        return Cow::Borrowed(text);
    }
    let needle = secret.as_bytes();
    hide(text, &|hay: &[u8]| {
        find_all(hay, needle)
            .into_iter()
            .map(|start| (start, start + needle.len()))
            .collect()
    })
}

/// Where the things to hide are in some bytes: non-overlapping `(start, end)` spans, in
/// order, ASCII case ignored.
pub(super) type Spans<'f> = &'f dyn Fn(&[u8]) -> Vec<(usize, usize)>;

/// `text` with every span `find` names replaced by [`REDACTED`], as written and once
/// `%XX` and JSON escapes are decoded (see [`redact`]). The spans of both views are put in
/// the text's own positions and merged before anything is replaced, so a secret found in
/// one view cannot keep another, overlapping it, from being found in the other.
pub(super) fn hide<'a>(text: &'a str, find: Spans<'_>) -> Cow<'a, str> {
    let bytes = text.as_bytes();
    let mut spans = find(bytes);
    if text.contains(['%', '\\']) {
        let (decoded, starts) = decode_escapes(bytes);
        for (m, m_end) in find(&decoded) {
            let start = starts[m];
            let end = starts.get(m_end).copied().unwrap_or(bytes.len());
            spans.push((start, end));
        }
        spans = merge(spans);
    }
    replace(text, spans)
}

/// `spans` sorted and merged where they overlap.
pub(super) fn merge(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match out.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// Removes `secret` from every string and object key of `value`, in place (see
/// [`redact`]). Returns whether anything changed.
pub fn redact_value(value: &mut Value, secret: &str) -> bool {
    rewrite_strings(value, &|text| redact(text, secret))
}

/// Rewrites every string and object key of `value` with `clean`, in place; whether
/// anything changed. Every item is visited: no short cut once one changed.
pub(super) fn rewrite_strings(
    value: &mut Value,
    clean: &dyn for<'t> Fn(&'t str) -> Cow<'t, str>,
) -> bool {
    match value {
        Value::String(text) => match clean(text) {
            Cow::Owned(clean) => {
                *text = clean;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => {
            let mut changed = false;
            for item in items {
                changed |= rewrite_strings(item, clean);
            }
            changed
        }
        Value::Object(map) => {
            let mut changed = false;
            if map.keys().any(|k| matches!(clean(k), Cow::Owned(_))) {
                let entries = std::mem::take(map);
                for (key, item) in entries {
                    map.insert(clean(&key).into_owned(), item);
                }
                changed = true;
            }
            for item in map.values_mut() {
                changed |= rewrite_strings(item, clean);
            }
            changed
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Raw JSON with `secret` removed from its decoded strings and keys: escapes such as
/// `\u0073` cannot hide it. The same value when nothing changed; when the text is not
/// JSON, its plain redaction if that is still JSON, else `None` (dropped, not kept with
/// the secret).
pub fn redact_json(raw: &RawValue, secret: &str) -> Option<Box<RawValue>> {
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(mut value) => {
            if redact_value(&mut value, secret) {
                serde_json::value::to_raw_value(&value).ok()
            } else {
                Some(raw.to_owned())
            }
        }
        Err(_) => RawValue::from_string(redact(raw.get(), secret).into_owned()).ok(),
    }
}

/// `bytes` with `%XX` and JSON string escapes decoded, and for each decoded byte the
/// offset in `bytes` where the text it came from starts (every byte of one escape shares
/// its escape's start). Anything that is not a complete escape stays as it is.
fn decode_escapes(bytes: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut starts = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let (unit, len) = match bytes[i] {
            b'%' => match hex_at(bytes, i + 1, 2) {
                Some(byte) => (Unit::Byte(byte as u8), 3),
                None => (Unit::Byte(b'%'), 1),
            },
            b'\\' => json_escape(bytes, i),
            b => (Unit::Byte(b), 1),
        };
        match unit {
            Unit::Byte(b) => {
                decoded.push(b);
                starts.push(i);
            }
            Unit::Char(c) => {
                let mut buf = [0u8; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    decoded.push(b);
                    starts.push(i);
                }
            }
        }
        i += len;
    }
    (decoded, starts)
}

/// One decoded piece of text.
enum Unit {
    Byte(u8),
    Char(char),
}

/// The JSON escape at `bytes[i]` (a backslash) and its length; a backslash that starts no
/// complete escape is itself.
fn json_escape(bytes: &[u8], i: usize) -> (Unit, usize) {
    let simple = match bytes.get(i + 1) {
        Some(b'"') => Some(b'"'),
        Some(b'\\') => Some(b'\\'),
        Some(b'/') => Some(b'/'),
        Some(b'b') => Some(0x08),
        Some(b'f') => Some(0x0c),
        Some(b'n') => Some(b'\n'),
        Some(b'r') => Some(b'\r'),
        Some(b't') => Some(b'\t'),
        _ => None,
    };
    if let Some(b) = simple {
        return (Unit::Byte(b), 2);
    }
    if bytes.get(i + 1) != Some(&b'u') {
        return (Unit::Byte(b'\\'), 1);
    }
    let Some(first) = hex_at(bytes, i + 2, 4) else {
        return (Unit::Byte(b'\\'), 1);
    };
    if let Some(c) = char::from_u32(first) {
        return (Unit::Char(c), 6);
    }
    // A high surrogate: its pair must follow as a second escape.
    let low = (bytes.get(i + 6) == Some(&b'\\') && bytes.get(i + 7) == Some(&b'u'))
        .then(|| hex_at(bytes, i + 8, 4))
        .flatten();
    match low {
        Some(low) if (0xD800..0xDC00).contains(&first) && (0xDC00..0xE000).contains(&low) => {
            let c = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
            match char::from_u32(c) {
                Some(c) => (Unit::Char(c), 12),
                None => (Unit::Byte(b'\\'), 1),
            }
        }
        _ => (Unit::Byte(b'\\'), 1),
    }
}

/// The value of `digits` hex digits at `bytes[at..]`, if they are all there.
fn hex_at(bytes: &[u8], at: usize, digits: usize) -> Option<u32> {
    let hex = bytes.get(at..at + digits)?;
    hex.iter().try_fold(0u32, |acc, &b| {
        let d = char::from(b).to_digit(16)?;
        Some(acc * 16 + d)
    })
}

/// `text` with each of `spans` (sorted, not overlapping) replaced by [`REDACTED`].
fn replace(text: &str, spans: Vec<(usize, usize)>) -> Cow<'_, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in spans {
        // A match of whole UTF-8 sequences starts and ends on character boundaries
        // (continuation bytes never equal an ASCII or leading byte); check anyway.
        if start < from || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        out.push_str(&text[from..start]);
        out.push_str(REDACTED);
        from = end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// Start offsets of the non-overlapping occurrences of `needle` in `hay`, ignoring ASCII
/// case: Knuth-Morris-Pratt over case-folded bytes, linear in both lengths.
pub(super) fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let m = needle.len();
    if m == 0 || hay.len() < m {
        return Vec::new();
    }
    let fold = |b: u8| b.to_ascii_lowercase();
    // failure[i]: length of the longest proper border of needle[..=i].
    let mut failure = vec![0usize; m];
    let mut k = 0;
    for i in 1..m {
        while k > 0 && fold(needle[i]) != fold(needle[k]) {
            k = failure[k - 1];
        }
        if fold(needle[i]) == fold(needle[k]) {
            k += 1;
        }
        failure[i] = k;
    }
    let mut found = Vec::new();
    let mut q = 0;
    for (i, &b) in hay.iter().enumerate() {
        while q > 0 && fold(b) != fold(needle[q]) {
            q = failure[q - 1];
        }
        if fold(b) == fold(needle[q]) {
            q += 1;
        }
        if q == m {
            found.push(i + 1 - m);
            // Non-overlapping: start again after this match.
            q = 0;
        }
    }
    found
}

/// How many members the objects of `value` hold, nested ones included.
pub(super) fn members(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len() + map.values().map(members).sum::<usize>(),
        Value::Array(items) => items.iter().map(members).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TOKEN: &str = "sk-Live/Secret+42";

    #[test]
    fn plain_reflections_are_replaced() {
        let text = format!("Bearer realm=\"x\", error_description=\"bad token {TOKEN}\"");
        let out = redact(&text, TOKEN);
        assert_eq!(
            out,
            "Bearer realm=\"x\", error_description=\"bad token [redacted]\""
        );
    }

    #[test]
    fn case_and_percent_encoding_do_not_hide_it() {
        let lower = TOKEN.to_ascii_lowercase();
        assert_eq!(
            redact(&format!("http://{lower}.evil/"), TOKEN),
            "http://[redacted].evil/"
        );
        let encoded = "sk-Live%2FSecret%2B42";
        assert_eq!(redact(&format!("?t={encoded}&x"), TOKEN), "?t=[redacted]&x");
        assert_eq!(
            redact(&format!("?t={}", encoded.to_ascii_lowercase()), TOKEN),
            "?t=[redacted]"
        );
    }

    #[test]
    fn partly_encoded_forms_are_found_too() {
        for encoded in [
            "sk-Live/Secret%2B42",
            "sk-Live%2FSecret+42",
            "sk%2dLive%2fSecret%2b42",
            "%73k-Live/Secret+42",
        ] {
            assert_eq!(
                redact(&format!("?t={encoded}&x=1"), TOKEN),
                "?t=[redacted]&x=1",
                "{encoded}"
            );
        }
        assert_eq!(redact("100% sure", TOKEN), "100% sure");
    }

    #[test]
    fn nothing_to_replace_borrows() {
        assert!(matches!(redact("all clear", TOKEN), Cow::Borrowed(_)));
        assert!(matches!(redact("x", ""), Cow::Borrowed(_)));
    }

    #[test]
    fn repeated_and_overlapping_text() {
        assert_eq!(redact("aaaa", "aa"), "[redacted][redacted]");
        assert_eq!(redact("abababab", "abab"), "[redacted][redacted]");
        assert_eq!(redact("éTOKéNé", "tokén"), "é[redacted]é");
    }

    #[test]
    fn escapes_in_json_do_not_hide_it() {
        let raw = RawValue::from_string(
            r#"{"k":"\u0073k-Live/Secret+42","sk-live/secret+42":[1]}"#.to_owned(),
        )
        .unwrap();
        let clean = redact_json(&raw, TOKEN).unwrap();
        assert_eq!(clean.get(), r#"{"[redacted]":[1],"k":"[redacted]"}"#);
        let same = RawValue::from_string(r#"{"a":1}"#.to_owned()).unwrap();
        assert_eq!(redact_json(&same, TOKEN).unwrap().get(), r#"{"a":1}"#);
    }

    #[test]
    fn json_escaped_spellings_are_found_in_raw_text() {
        // PHP writes `/` as `\/` by default; any character may be a `\uXXXX` escape.
        for spelled in [
            r"sk-Live\/Secret+42",
            r"\u0073k-Live\/Secret\u002b42",
            r"\u0073\u006B\u002D\u004C\u0069\u0076\u0065\u002F\u0053\u0065\u0063\u0072\u0065\u0074\u002B\u0034\u0032",
            r"sk-Live%2FSecret\u002B42",
        ] {
            let body = format!(r#"{{"echo":"Bearer {spelled}","n":1}}"#);
            assert_eq!(
                redact(&body, TOKEN),
                r#"{"echo":"Bearer [redacted]","n":1}"#,
                "{spelled}"
            );
        }
        // Escaped quotes, backslashes, controls and astral characters in the secret.
        let odd = "a\"b\\c\nd😀e";
        let spelled = r#"x a\"b\\c\nd\ud83d\ude00e y"#;
        assert_eq!(redact(spelled, odd), "x [redacted] y");
        // A lone surrogate or a short escape is text, not an escape.
        assert_eq!(redact(r"\ud83d \u00", TOKEN), r"\ud83d \u00");
    }

    /// Writes `secret` the way a JSON producer or a URL encoder might: each character
    /// plain, `\uXXXX`, `%XX`, or `\/` for `/`, chosen by `picks`.
    fn spell(secret: &str, picks: &[u8]) -> String {
        let mut out = String::new();
        for (i, c) in secret.chars().enumerate() {
            match (picks.get(i).copied().unwrap_or(0) % 4, c) {
                (1, c) if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
                (2, c) if c.is_ascii() => out.push_str(&format!("%{:02X}", c as u32)),
                (3, '/') => out.push_str("\\/"),
                (_, c) => out.push(c),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn every_spelling_is_removed(
            secret in "[a-zA-Z0-9+/=_.-]{8,32}",
            picks in proptest::collection::vec(any::<u8>(), 32),
            before in "[a-z \"{}:,]{0,12}",
            after in "[a-z \"{}:,]{0,12}",
        ) {
            let text = format!("{before}{}{after}", spell(&secret, &picks));
            let out = redact(&text, &secret);
            prop_assert!(out.contains(REDACTED), "{text} -> {out}");
            prop_assert!(!out.contains(&secret), "{out}");
        }
    }

    proptest! {
        #[test]
        fn the_secret_never_survives(
            secret in "[a-zA-Z0-9+/=_.-]{1,24}",
            parts in proptest::collection::vec(".{0,12}", 0..6),
        ) {
            let text = parts.join(&secret);
            let out = redact(&text, &secret);
            let folded = out.to_ascii_lowercase();
            prop_assert!(!folded.contains(&secret.to_ascii_lowercase()) || secret.len() <= REDACTED.len() && REDACTED.to_ascii_lowercase().contains(&secret.to_ascii_lowercase()));
        }
    }
}
