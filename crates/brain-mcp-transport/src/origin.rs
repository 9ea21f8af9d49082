//! Where the transport meets the shared URL type (`brain_mcp_proto::url`): origins for
//! messages, and a redirect's target, which the shared type resolves and compares and
//! which becomes an `http::Uri` here only because hyper sends to one.

use brain_mcp_proto::url::{Url, origin_of};
use hyper::Uri;

/// `scheme://host[:port]` for messages and `Debug`: never the path or query (they may
/// hold keys), never user info; `(relative)` for a URL without a scheme and host.
pub(crate) fn origin(url: &Uri) -> String {
    origin_of(&url.to_string()).unwrap_or_else(|| "(relative)".to_owned())
}

/// `url` as the shared type reads it (its lenient rule: the request URL was accepted by
/// hyper already).
pub(crate) fn shared(url: &Uri) -> Option<Url> {
    Url::parse_lenient(&url.to_string()).ok()
}

/// The `Uri` hyper sends to for `url`, if hyper accepts it and it names a host.
pub(crate) fn to_uri(url: &Url) -> Option<Uri> {
    let uri: Uri = url.as_str().parse().ok()?;
    uri.host()?;
    Some(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn origins_never_show_user_info_or_the_path() {
        assert_eq!(origin(&u("http://user:pw@h:8/p?key=1")), "http://h:8");
        assert_eq!(origin(&u("https://H.example/mcp")), "https://h.example");
    }

    #[test]
    fn uris_round_trip_through_the_shared_type() {
        for text in ["http://h:8/a/mcp?x=1", "https://[::1]/", "http://h/"] {
            let url = shared(&u(text)).unwrap();
            assert_eq!(to_uri(&url).unwrap(), u(text));
        }
        // A path hyper takes as `/` reads as `/`.
        assert_eq!(shared(&u("http://h")).unwrap().path(), "/");
        // A target hyper would not send to is no target.
        let spaced = Url::parse_lenient("http://h/a b").unwrap();
        assert!(to_uri(&spaced).is_none());
        // User info is refused by the shared type.
        assert!(shared(&u("http://u@h/")).is_none());
    }
}
