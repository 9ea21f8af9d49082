//! Config errors: each names a JSON path and a reason; loading reports all of them at once.

use std::fmt;

/// One problem in a config document.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    /// Where the problem is, such as `tools[1].timeout_seconds`; `$` for the document itself.
    pub path: String,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Reasons can quote the document's strings; line breaks in them are escaped so
        // each problem stays on one line.
        let reason = self.reason.replace('\r', "\\r").replace('\n', "\\n");
        write!(f, "{}: {reason}", self.path)
    }
}

/// Every problem found in a config document, in document order; never empty.
///
/// `Display` prints one `path: reason` line per problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigErrors(Vec<ConfigError>);

impl ConfigErrors {
    /// The individual problems.
    pub fn errors(&self) -> &[ConfigError] {
        &self.0
    }

    /// Wraps a non-empty list; `None` when there is nothing to report.
    pub(crate) fn from_vec(errors: Vec<ConfigError>) -> Option<Self> {
        if errors.is_empty() {
            None
        } else {
            Some(Self(errors))
        }
    }

    /// A single problem with the document as a whole.
    pub(crate) fn root(reason: impl Into<String>) -> Self {
        Self(vec![ConfigError {
            path: ROOT.to_owned(),
            reason: reason.into(),
        }])
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// The path of the document itself.
pub(crate) const ROOT: &str = "$";

/// The most problems one load lists; the rest are counted in a last line. A document can
/// hold a problem in each of a million keys, and the report should stay far smaller than
/// the document.
pub(crate) const MAX_LISTED: usize = 1000;

/// Collects errors while walking a document.
#[derive(Debug, Default)]
pub(crate) struct Errors {
    listed: Vec<ConfigError>,
    /// Problems found after [`MAX_LISTED`] were listed.
    unlisted: usize,
}

impl Errors {
    pub(crate) fn push(&mut self, path: &str, reason: impl Into<String>) {
        if self.listed.len() >= MAX_LISTED {
            self.unlisted += 1;
            return;
        }
        let path = if path.is_empty() { ROOT } else { path };
        self.listed.push(ConfigError {
            path: path.to_owned(),
            reason: reason.into(),
        });
    }

    /// The collected problems, `None` when there are none.
    pub(crate) fn finish(mut self) -> Option<ConfigErrors> {
        if self.unlisted > 0 {
            self.listed.push(ConfigError {
                path: ROOT.to_owned(),
                reason: format!("{} more problems, not listed", self.unlisted),
            });
        }
        ConfigErrors::from_vec(self.listed)
    }

    /// The collected problems; call only after pushing at least one.
    pub(crate) fn into_errors(self) -> ConfigErrors {
        self.finish()
            .unwrap_or_else(|| ConfigErrors::root("invalid config"))
    }

    /// How many problems were found, listed or not.
    pub(crate) fn len(&self) -> usize {
        self.listed.len() + self.unlisted
    }
}

/// The longest key written out in a path; a longer one is cut, with `…`. Keys are the
/// document's own text, and a path repeats every key above it.
const MAX_KEY_SHOWN: usize = 64;

/// The path of field `key` inside the object at `parent`.
pub(crate) fn field_path(parent: &str, key: &str) -> String {
    if key.len() > MAX_KEY_SHOWN {
        let mut end = MAX_KEY_SHOWN;
        while !key.is_char_boundary(end) {
            end -= 1;
        }
        let quoted = serde_json::Value::String([&key[..end], "…"].concat()).to_string();
        return [parent, "[", &quoted, "]"].concat();
    }
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    // Written piece by piece: a config of 10,000 bindings builds tens of thousands of
    // these, and `format!` cost 7% of its load.
    match (parent.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => [parent, ".", key].concat(),
        (_, false) => {
            let quoted = serde_json::Value::String(key.to_owned()).to_string();
            [parent, "[", &quoted, "]"].concat()
        }
    }
}

/// The path of element `index` of the array at `parent`.
pub(crate) fn index_path(parent: &str, index: usize) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = index;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(&digits[at..]).unwrap_or("0");
    [parent, "[", digits, "]"].concat()
}

/// Where a value sits: a chain of steps back to the root, written out only when needed.
#[derive(Clone, Copy)]
pub(crate) enum Step<'p> {
    Root,
    /// The root of a value parsed on its own, found at this path of the document.
    Prefix(&'p str),
    Key(&'p Self, &'p str),
    Index(&'p Self, usize),
}

impl Step<'_> {
    /// The path, written out.
    pub(crate) fn path(&self) -> String {
        match self {
            Self::Root => String::new(),
            Self::Prefix(path) => (*path).to_owned(),
            Self::Key(parent, key) => field_path(&parent.path(), key),
            Self::Index(parent, i) => index_path(&parent.path(), *i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_the_document() {
        assert_eq!(field_path("", "tools"), "tools");
        assert_eq!(index_path("tools", 1), "tools[1]");
        assert_eq!(field_path("tools[1]", "name"), "tools[1].name");
        assert_eq!(field_path("tools[0]", "a b"), "tools[0][\"a b\"]");
        assert_eq!(field_path("", "1x"), "[\"1x\"]");
        for index in [0, 9, 10, 99, 100, 12_345, usize::MAX] {
            assert_eq!(index_path("t", index), format!("t[{index}]"));
        }
    }

    #[test]
    fn display_lists_every_error_on_its_own_line() {
        let mut errors = Errors::default();
        errors.push("tools[0].name", "must be a string");
        errors.push("", "bad");
        let all = errors.finish().expect("two errors");
        assert_eq!(all.to_string(), "tools[0].name: must be a string\n$: bad");
        assert_eq!(all.errors().len(), 2);
    }

    #[test]
    fn a_report_stays_small_whatever_the_document() {
        let mut errors = Errors::default();
        for i in 0..MAX_LISTED + 5 {
            errors.push(&index_path("tools", i), "must be an object");
        }
        assert_eq!(errors.len(), MAX_LISTED + 5);
        let all = errors.finish().expect("errors");
        assert_eq!(all.errors().len(), MAX_LISTED + 1);
        assert_eq!(
            all.errors()[MAX_LISTED].to_string(),
            "$: 5 more problems, not listed"
        );
        // A long key is cut in a path, at a character boundary.
        let key = "é".repeat(100);
        let path = field_path("tools[0]", &key);
        assert_eq!(path, format!("tools[0][\"{}…\"]", "é".repeat(32)));
        assert_eq!(field_path("", &"a".repeat(64)), "a".repeat(64));
    }

    #[test]
    fn line_breaks_quoted_from_the_document_stay_on_one_line() {
        // The host_config fuzz target checks this property: duplicate names and tenants are
        // quoted as written, so a line break in one split its problem over two lines.
        let text =
            r#"{"tools": [{"name": "a\nb"}, {"name": "a\nb", "tenants": ["t\r\n", "t\r\n"]}]}"#;
        let errors = crate::HostConfig::load(text).unwrap_err();
        let shown = errors.to_string();
        assert_eq!(shown.lines().count(), errors.errors().len(), "{shown}");
        assert!(
            shown.contains(r#"tools[1].name: duplicate name "a\nb" (first used at tools[0].name)"#)
        );
        assert!(shown.contains(r#"tools[1].tenants[1]: duplicate tenant "t\r\n""#));
        // The reason itself keeps the text as it was.
        assert!(
            errors
                .errors()
                .iter()
                .any(|e| e.reason.contains("\"a\nb\""))
        );
    }
}
