//! Where a reference leads from a base URL (RFC 3986 §5.2): how a redirect's `Location`
//! is followed. Pure text work; the result is read again by the lenient rule.

use super::split::is_scheme;

/// The longest reference resolved: a server's redirect is a URL, not a payload.
pub const MAX_LOCATION: usize = 8 * 1024;

/// The text `reference` names from a base of `scheme://authority` and `path`, as RFC 3986
/// §5.2 resolves absolute, network-path, absolute-path, query-only and relative-path
/// references, dot segments removed and any fragment dropped. `None` for an empty or
/// over-long reference, an absolute one that names no authority, or one that names user
/// information.
pub(super) fn resolve(
    scheme: &str,
    authority: &str,
    path: &str,
    reference: &str,
) -> Option<String> {
    let reference = reference.split('#').next().unwrap_or_default().trim();
    if reference.is_empty() || reference.len() > MAX_LOCATION {
        return None;
    }
    // An absolute reference must name its authority (`scheme://`); a network-path one
    // (`//host`) keeps the base's scheme; every other keeps the base's authority too.
    let (scheme, network) = match scheme_of(reference) {
        Some((scheme, rest)) => (scheme, Some(rest.strip_prefix("//")?)),
        None => (scheme, reference.strip_prefix("//")),
    };
    let (authority, rest) = match network {
        Some(rest) => {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            (&rest[..end], rest[end..].to_owned())
        }
        None => {
            if reference.starts_with('/') {
                (authority, reference.to_owned())
            } else if reference.starts_with('?') {
                (authority, format!("{path}{reference}"))
            } else {
                let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
                let dir = if dir.is_empty() { "/" } else { dir };
                (authority, format!("{dir}{reference}"))
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
    Some(match query {
        Some(query) => format!("{scheme}://{authority}{path}?{query}"),
        None => format!("{scheme}://{authority}{path}"),
    })
}

/// The scheme of an absolute reference and what follows its `:` (a scheme before any
/// `/`, `?` or `#`: those characters never appear in one).
fn scheme_of(reference: &str) -> Option<(&str, &str)> {
    let colon = reference.find(':')?;
    let scheme = &reference[..colon];
    is_scheme(scheme).then(|| (scheme, &reference[colon + 1..]))
}

/// A path with its `.` and `..` segments resolved (RFC 3986 §5.2.4), in one pass over
/// its segments: the kept ones on a stack, `..` dropping the last, never above the root.
pub(super) fn remove_dot_segments(path: &str) -> String {
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
