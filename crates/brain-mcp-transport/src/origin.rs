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

/// Resolves `Location` against `base` (absolute, scheme-relative, absolute-path or
/// relative-path references), dropping any fragment.
pub(crate) fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    let location = location.split('#').next().unwrap_or_default().trim();
    if location.is_empty() {
        return None;
    }
    let scheme = base.scheme_str()?;
    let authority = base.authority()?.as_str();
    let text = if location.contains("://") {
        location.to_owned()
    } else if let Some(rest) = location.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if location.starts_with('/') {
        format!("{scheme}://{authority}{location}")
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{location}")
    };
    let uri: Uri = text.parse().ok()?;
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
    fn resolves_locations() {
        let base = u("http://h:8/a/mcp?x=1");
        assert_eq!(resolve(&base, "/mcp/").unwrap(), u("http://h:8/mcp/"));
        assert_eq!(resolve(&base, "mcp/").unwrap(), u("http://h:8/a/mcp/"));
        assert_eq!(resolve(&base, "//o:9/p").unwrap(), u("http://o:9/p"));
        assert_eq!(resolve(&base, "https://o/p#f").unwrap(), u("https://o/p"));
        assert!(resolve(&base, "").is_none());
    }

    #[test]
    fn origins() {
        assert!(same_origin(&u("http://H/a"), &u("http://h:80/b")));
        assert!(!same_origin(&u("http://h/a"), &u("https://h/a")));
        assert!(!same_origin(&u("http://h:1/a"), &u("http://h:2/a")));
        assert_eq!(origin(&u("http://user:pw@h:8/p?key=1")), "http://h:8");
    }
}
