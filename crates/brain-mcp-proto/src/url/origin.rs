//! Origins as messages show them: `scheme://host[:port]`, never a path, a query or user
//! information (they may hold keys).

use super::split::{ends, is_scheme, scheme_and_rest};

/// `scheme://host[:port]` from a scheme, a lower-cased host (an IPv6 literal in its
/// brackets) and the port as written.
pub(super) fn format(https: bool, host: &str, port: Option<u16>) -> String {
    let scheme = if https { "https" } else { "http" };
    match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    }
}

/// The origin of any absolute URL with an authority (a proxy's, say, whatever its
/// scheme), for messages: scheme and host lower-cased, the port as written, user
/// information dropped. `None` when `url` has no `scheme://`, no host, or whitespace or
/// control characters in its authority. For a URL that [`super::Url`] accepts this is
/// [`super::Url::origin`].
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, start) = scheme_and_rest(url)?;
    if !is_scheme(scheme) {
        return None;
    }
    let (end, _, _) = ends(url, start);
    let authority = &url[start..end];
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host.is_empty() || host.starts_with(':') {
        return None;
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    Some(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    ))
}
