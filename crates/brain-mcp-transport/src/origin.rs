//! Origins and redirect targets: how a URL is written in messages (scheme, host and port,
//! never a path, query or user info), whether two URLs share an origin, and where a
//! `Location` leads.

use hyper::Uri;

/// `METHOD scheme://host:port` for messages: never the path or query (they may hold
/// keys), never user info.
pub(crate) fn origin(url: &Uri) -> String {
    let scheme = url.scheme_str().unwrap_or("?");
    let host = url.host().unwrap_or("?");
    match url.port_u16() {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    }
}

fn default_port(scheme: Option<&str>) -> Option<u16> {
    match scheme {
        Some("http") => Some(80),
        Some("https") => Some(443),
        _ => None,
    }
}

pub(crate) fn same_origin(a: &Uri, b: &Uri) -> bool {
    let (Some(ha), Some(hb)) = (a.host(), b.host()) else {
        return false;
    };
    a.scheme() == b.scheme()
        && ha.eq_ignore_ascii_case(hb)
        && a.port_u16().or(default_port(a.scheme_str()))
            == b.port_u16().or(default_port(b.scheme_str()))
}

/// The longest `Location` resolved: a server's redirect is a URL, not a payload.
const MAX_LOCATION: usize = 8 * 1024;

/// Resolves `Location` against `base` as RFC 3986 §5.2 does (absolute, network-path,
/// absolute-path, query-only and relative-path references; dot segments removed), dropping
/// any fragment. `None` for a reference that names user information, or that does not
/// make an absolute URL with a host.
pub(crate) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    let location = location.split('#').next().unwrap_or_default().trim();
    if location.is_empty() || location.len() > MAX_LOCATION {
        return None;
    }
    // An absolute reference must name its authority (`scheme://`); a network-path one
    // (`//host`) keeps the base's scheme; every other keeps the base's authority too.
    let (scheme, network) = match scheme_of(location) {
        Some((scheme, rest)) => (scheme, Some(rest.strip_prefix("//")?)),
        None => (base.scheme_str()?, location.strip_prefix("//")),
    };
    let (authority, rest) = match network {
        Some(rest) => {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            (&rest[..end], rest[end..].to_owned())
        }
        None => {
            let authority = base.authority()?.as_str();
            let path = base.path();
            if location.starts_with('/') {
                (authority, location.to_owned())
            } else if location.starts_with('?') {
                (authority, format!("{path}{location}"))
            } else {
                let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
                let dir = if dir.is_empty() { "/" } else { dir };
                (authority, format!("{dir}{location}"))
            }
        }
    };
    if authority.contains('@') {
        return None;
    }
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest.as_str(), None),
    };
    let mut path = remove_dot_segments(path);
    if path.is_empty() {
        path.push('/');
    }
    let text = match query {
        Some(query) => format!("{scheme}://{authority}{path}?{query}"),
        None => format!("{scheme}://{authority}{path}"),
    };
    let uri: Uri = text.parse().ok()?;
    uri.host()?;
    Some(uri)
}

/// The scheme of an absolute reference and what follows its `:` (RFC 3986 §3.1: a letter,
/// then letters, digits, `+`, `-` or `.`, before any `/`, `?` or `#`).
fn scheme_of(reference: &str) -> Option<(&str, &str)> {
    let colon = reference.find(':')?;
    let scheme = &reference[..colon];
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme, &reference[colon + 1..]))
}

/// A path with its `.` and `..` segments resolved (RFC 3986 §5.2.4), in one pass over
/// its segments: the kept ones on a stack, `..` dropping the last, never above the root.
fn remove_dot_segments(path: &str) -> String {
    let absolute = path.starts_with('/');
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let mut kept: Vec<&str> = Vec::with_capacity(segments.len());
    // A path ending in `.` or `..` (or `/`) ends with a `/`.
    let mut trailing = false;
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => trailing = last,
            ".." => {
                kept.pop();
                trailing = last;
            }
            _ => {
                kept.push(segment);
                trailing = false;
            }
        }
    }
    let mut out = String::with_capacity(path.len());
    if absolute {
        out.push('/');
    }
    out.push_str(&kept.join("/"));
    if trailing && !out.is_empty() && !out.ends_with('/') {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn resolves_locations() {
        let base = u("http://h:8/a/mcp?x=1");
        assert_eq!(resolve(&base, "/mcp/").unwrap(), u("http://h:8/mcp/"));
        assert_eq!(resolve(&base, "mcp/").unwrap(), u("http://h:8/a/mcp/"));
        assert_eq!(resolve(&base, "//o:9/p").unwrap(), u("http://o:9/p"));
        assert_eq!(resolve(&base, "https://o/p#f").unwrap(), u("https://o/p"));
        assert!(resolve(&base, "").is_none());
        // Dot segments go, as RFC 3986 §5.2.4 says, and never above the root.
        assert_eq!(resolve(&base, "../b/./c").unwrap(), u("http://h:8/b/c"));
        assert_eq!(resolve(&base, "/x/../../y").unwrap(), u("http://h:8/y"));
        assert_eq!(
            resolve(&base, "https://o/a/b/../c").unwrap(),
            u("https://o/a/c")
        );
        assert_eq!(resolve(&base, "..").unwrap(), u("http://h:8/"));
        // A relative reference whose query holds `://` is relative, not absolute.
        assert_eq!(
            resolve(&base, "next?to=http://e/x").unwrap(),
            u("http://h:8/a/next?to=http://e/x")
        );
        // A query-only reference keeps the base's path.
        assert_eq!(resolve(&base, "?y=2").unwrap(), u("http://h:8/a/mcp?y=2"));
        // User information is never followed.
        assert!(resolve(&base, "http://user:pw@h:8/a").is_none());
        assert!(resolve(&base, "//user@h:8/a").is_none());
    }

    #[test]
    fn dot_segments_are_removed_as_the_rfc_shows() {
        // RFC 3986 §5.2.4's own examples.
        assert_eq!(remove_dot_segments("/a/b/c/./../../g"), "/a/g");
        assert_eq!(remove_dot_segments("mid/content=5/../6"), "mid/6");
        assert_eq!(remove_dot_segments("/../a"), "/a");
        assert_eq!(remove_dot_segments("/a/."), "/a/");
        assert_eq!(remove_dot_segments("/a/.."), "/");
        assert_eq!(remove_dot_segments("/a/b/../../.."), "/");
        assert_eq!(remove_dot_segments("a/.."), "");
        assert_eq!(remove_dot_segments("/a//b"), "/a//b");
        assert_eq!(remove_dot_segments("/a/b/"), "/a/b/");
        assert_eq!(
            remove_dot_segments("/%2e%2e/a"),
            "/%2e%2e/a",
            "only literal dots"
        );
    }

    #[test]
    fn a_long_location_is_not_followed() {
        let base = u("http://h:8/a");
        let long = format!("/{}", "./".repeat(MAX_LOCATION));
        assert!(resolve(&base, &long).is_none());
        let within = format!("/{}x", "./".repeat(100));
        assert_eq!(resolve(&base, &within).unwrap(), u("http://h:8/x"));
    }

    #[test]
    fn origins() {
        assert!(same_origin(&u("http://H/a"), &u("http://h:80/b")));
        assert!(!same_origin(&u("http://h/a"), &u("https://h/a")));
        assert!(!same_origin(&u("http://h:1/a"), &u("http://h:2/a")));
        assert_eq!(origin(&u("http://user:pw@h:8/p?key=1")), "http://h:8");
    }
}
