//! Media type parsing for `Content-Type` values (RFC 9110 section 8.3.1).

/// The reply body formats this transport understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentType {
    /// `application/json` (any parameters, any case).
    Json,
    /// `text/event-stream` (any parameters, any case).
    EventStream,
}

impl ContentType {
    /// The canonical lowercase essence, e.g. `application/json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::EventStream => "text/event-stream",
        }
    }
}

/// Returns the lowercase `type/subtype` essence of a media type, without parameters,
/// or `None` when the value is not of the form `token "/" token [; params]`.
pub(crate) fn essence(value: &str) -> Option<String> {
    let head = head(value);
    let (ty, sub) = head.split_once('/')?;
    if ty.is_empty() || sub.is_empty() || !ty.bytes().all(is_tchar) || !sub.bytes().all(is_tchar) {
        return None;
    }
    Some(head.to_ascii_lowercase())
}

/// The part of a media type before its parameters, without surrounding space.
fn head(value: &str) -> &str {
    value.split(';').next().unwrap_or_default().trim()
}

/// Classifies a `Content-Type` value; `None` for anything other than JSON or SSE.
pub(crate) fn classify(value: &str) -> Option<ContentType> {
    let head = head(value);
    // Compared in place, without the lower-cased copy `essence` makes.
    [ContentType::Json, ContentType::EventStream]
        .into_iter()
        .find(|kind| head.eq_ignore_ascii_case(kind.as_str()))
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_case_and_parameters() {
        assert_eq!(classify("application/json"), Some(ContentType::Json));
        assert_eq!(
            classify("Application/JSON; charset=utf-8"),
            Some(ContentType::Json)
        );
        assert_eq!(
            classify(" text/event-stream ;charset=UTF-8"),
            Some(ContentType::EventStream)
        );
        assert_eq!(classify("application/json-seq"), None);
        assert_eq!(classify("application/jsonx"), None);
        assert_eq!(classify("text/html"), None);
        assert_eq!(classify("application json"), None);
        assert_eq!(classify(""), None);
        assert_eq!(classify("application/json\u{0}"), None);
        assert_eq!(classify("application/ json"), None);
        assert_eq!(classify("text/event-stream,text/html"), None);
    }
}
