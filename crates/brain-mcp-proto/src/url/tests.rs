//! The endpoint rule's cases (moved with it from brain-tools-core), the lenient rule's,
//! origins, and reference resolution (moved from the transport's redirect handling).

use super::resolve::remove_dot_segments;
use super::*;

#[test]
fn the_host_and_port_are_read_once() {
    for (url, host, port) in [
        ("https://Example.com/mcp", "example.com", 443),
        ("http://example.com", "example.com", 80),
        ("http://127.0.0.1:8080/mcp", "127.0.0.1", 8080),
        ("HTTPS://[::1]:3000/mcp?x=1", "::1", 3000),
    ] {
        let parsed = Url::parse(url).unwrap();
        assert_eq!(
            (parsed.host().as_ref(), parsed.port()),
            (host, port),
            "{url}"
        );
    }
}

#[test]
fn accepted_urls_and_their_origins() {
    for (url, origin) in [
        ("https://example.com/mcp", "https://example.com"),
        ("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080"),
        ("HTTPS://Example.com", "https://example.com"),
        ("http://[::1]:3000/mcp?x=1", "http://[::1]:3000"),
        ("http://localhost", "http://localhost"),
        (
            "http://mcp_server.internal:80/a/b?k=v&x=%2F",
            "http://mcp_server.internal:80",
        ),
        (
            "https://xn--bcher-kva.example/mcp",
            "https://xn--bcher-kva.example",
        ),
        ("https://h/p?q=a:b@c/d?e", "https://h"),
        ("https://123.example/mcp", "https://123.example"),
        (
            "https://api.0xcafe.example/mcp",
            "https://api.0xcafe.example",
        ),
        ("http://10.0.0.1:9/mcp", "http://10.0.0.1:9"),
    ] {
        let parsed = Url::parse(url).unwrap();
        assert_eq!(parsed.origin(), origin, "{url}");
        assert_eq!(parsed.as_str(), url);
    }
}

#[test]
fn refused_urls_say_why_without_echoing_them() {
    let cases = [
        ("ftp://example.com", "must be an http or https URL"),
        ("example.com/mcp", "must be an http or https URL"),
        ("file:///etc/passwd", "must be an http or https URL"),
        ("https://", "must have a host"),
        ("https:///mcp", "must have a host"),
        (
            "https://u:p@example.com",
            "must not contain credentials; use token_env",
        ),
        (
            "http://user:pw@host/mcp?key=1",
            "must not contain credentials; use token_env",
        ),
        ("https://example.com/a#b", "must not have a fragment"),
        (
            "https://example.com:0/",
            "must have a port between 1 and 65535",
        ),
        (
            "https://example.com:99999/",
            "must have a port between 1 and 65535",
        ),
        (
            "https://example.com:x/",
            "must have a port between 1 and 65535",
        ),
        (
            "https://example.com:/",
            "must have a port between 1 and 65535",
        ),
        (
            "https://example.com:+80/",
            "must have a port between 1 and 65535",
        ),
        (
            "https://exa mple.com",
            "must not contain whitespace or control characters",
        ),
        ("https://exa<mple.com", "must have a valid host"),
        ("http://[zz]/", "must have a valid host"),
        ("http://[fe80::1%25eth0]/", "must have a valid host"),
        ("http://a..b/", "must have a valid host"),
        ("http://a%41b/", "must have a valid host"),
        // Names an IPv4 parser reads as an address in another form, or TLS refuses.
        ("https://127.1:8443/mcp", "must have a valid host"),
        ("https://10.1.2/mcp", "must have a valid host"),
        ("https://localhost.0x7f/mcp", "must have a valid host"),
        ("https://a.b.123/mcp", "must have a valid host"),
        ("https://x-.localhost/mcp", "must have a valid host"),
        ("https://-x.localhost/mcp", "must have a valid host"),
        ("http://256.1.1.1/mcp", "must have a valid host"),
        (
            "https://bücher.example/mcp",
            "must have an ASCII host name: write an internationalized name in its xn-- form",
        ),
        (
            "https://example.com/über",
            "must be ASCII: percent-encode other characters in the path and query",
        ),
        (
            "https://example.com/mcp?q=\"x\"",
            "has a character that must be percent-encoded: '\"'",
        ),
        (
            "https://example.com/<x>",
            "has a character that must be percent-encoded: '<'",
        ),
        (
            "https://example.com/a%zz",
            "has a % that does not start a %XX escape",
        ),
        (
            "https://example.com/{x}",
            "has a character that must be percent-encoded: '{'",
        ),
    ];
    for (url, reason) in cases {
        assert_eq!(Url::parse(url).unwrap_err().to_string(), reason, "{url}");
    }
}

#[test]
fn debug_shows_the_origin_only() {
    let url = Url::parse("https://h.example/mcp?api_key=s3cret").unwrap();
    assert_eq!(format!("{url:?}"), "Url(\"https://h.example\")");
}

#[test]
fn length_is_bounded() {
    let url = format!("https://h/{}", "a".repeat(MAX_URL_LEN));
    assert_eq!(Url::parse(&url).unwrap_err(), UrlError::TooLong);
    assert_eq!(UrlError::TooLong.to_string(), "must be at most 2048 bytes");
}

fn lenient(s: &str) -> Url {
    Url::parse_lenient(s).unwrap()
}

#[test]
fn parts_are_read_as_written() {
    let url = Url::parse("HTTPS://H.example:8443/a/b?k=v&x=%2F").unwrap();
    assert_eq!(url.scheme(), "https");
    assert!(url.is_https());
    assert_eq!(url.path(), "/a/b");
    assert_eq!(url.query(), Some("k=v&x=%2F"));
    assert!(!url.has_fragment());
    assert!(!url.is_default_port());
    let bare = Url::parse("http://h").unwrap();
    assert_eq!((bare.path(), bare.query()), ("", None));
    assert!(bare.is_default_port());
    assert!(Url::parse("http://h:80/").unwrap().is_default_port());
    let fragment = lenient("http://h/p?q#f?g");
    assert_eq!((fragment.path(), fragment.query()), ("/p", Some("q")));
    assert!(fragment.has_fragment());
}

#[test]
fn every_url_the_endpoint_rule_accepts_the_lenient_rule_reads_alike() {
    for url in [
        "https://example.com/mcp",
        "http://127.0.0.1:8080/mcp",
        "HTTPS://Example.com",
        "http://[::1]:3000/mcp?x=1",
        "http://mcp_server.internal:80/a/b?k=v&x=%2F",
        "https://h/p?q=a:b@c/d?e",
    ] {
        assert_eq!(Url::parse(url).unwrap(), lenient(url), "{url}");
    }
}

#[test]
fn the_lenient_rule_takes_what_a_peer_may_write() {
    for (url, origin) in [
        ("https://h/a#frag", "https://h"),
        ("https://h/a b/\"x\"", "https://h"),
        ("https://Bücher.example/über", "https://bücher.example"),
        ("https://127.1/x", "https://127.1"),
        ("HTTP://H:8080", "http://h:8080"),
    ] {
        assert_eq!(lenient(url).origin(), origin, "{url}");
    }
    for (url, error) in [
        ("ftp://h/x", UrlError::NotHttp),
        ("not a url", UrlError::NotHttp),
        ("https:///x", UrlError::NoHost),
        ("https://:8/x", UrlError::NoHost),
        ("https://u:p@h/", UrlError::Credentials),
        ("https://h:x/", UrlError::BadPort),
        ("https://h:0/", UrlError::BadPort),
        ("https://[zz]/", UrlError::BadHost),
    ] {
        assert_eq!(Url::parse_lenient(url), Err(error), "{url}");
    }
}

#[test]
fn origins() {
    let same = |a: &str, b: &str| lenient(a).same_origin(&lenient(b));
    assert!(same("http://H/a", "http://h:80/b"));
    assert!(same("https://[::1]/a", "https://[::1]:443/"));
    assert!(!same("http://h/a", "https://h/a"));
    assert!(!same("http://h:1/a", "http://h:2/a"));
    assert_eq!(
        origin_of("http://user:pw@h:8/p?key=1").as_deref(),
        Some("http://h:8")
    );
    assert_eq!(
        origin_of("SOCKS5://u@Proxy:1080").as_deref(),
        Some("socks5://proxy:1080")
    );
    for bad in [
        "/relative",
        "http://",
        "http://u@/x",
        "1http://h",
        "http://a b/",
    ] {
        assert_eq!(origin_of(bad), None, "{bad}");
    }
    // For a URL the type accepts, the message origin is the type's.
    for url in [
        "https://Example.com:8443/x?k=1",
        "http://[::1]/",
        "http://h",
    ] {
        assert_eq!(
            origin_of(url).as_deref(),
            Some(lenient(url).origin()),
            "{url}"
        );
    }
}

#[test]
fn resolves_locations() {
    let base = lenient("http://h:8/a/mcp?x=1");
    let to = |reference: &str| base.resolve(reference).map(|u| u.as_str().to_owned());
    let is = |reference: &str, expected: &str| {
        assert_eq!(to(reference).as_deref(), Some(expected), "{reference}");
    };
    is("/mcp/", "http://h:8/mcp/");
    is("mcp/", "http://h:8/a/mcp/");
    is("//o:9/p", "http://o:9/p");
    is("https://o/p#f", "https://o/p");
    assert_eq!(to(""), None);
    assert_eq!(to("  "), None);
    // Dot segments go, as RFC 3986 §5.2.4 says, and never above the root.
    is("../b/./c", "http://h:8/b/c");
    is("/x/../../y", "http://h:8/y");
    is("https://o/a/b/../c", "https://o/a/c");
    is("..", "http://h:8/");
    // A relative reference whose query holds `://` is relative, not absolute.
    is("next?to=http://e/x", "http://h:8/a/next?to=http://e/x");
    // A query-only reference keeps the base's path.
    is("?y=2", "http://h:8/a/mcp?y=2");
    // User information is never followed.
    assert_eq!(to("http://user:pw@h:8/a"), None);
    assert_eq!(to("//user@h:8/a"), None);
    // Nor another scheme, nor an absolute reference without an authority.
    assert_eq!(to("ftp://h/x"), None);
    assert_eq!(to("https:/x"), None);
    // A base without a path resolves as if it were `/`.
    assert_eq!(
        lenient("http://h")
            .resolve("x")
            .map(|u| u.as_str().to_owned())
            .as_deref(),
        Some("http://h/x")
    );
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
    let base = lenient("http://h:8/a");
    let long = format!("/{}", "./".repeat(MAX_LOCATION));
    assert!(base.resolve(&long).is_none());
    let within = format!("/{}x", "./".repeat(100));
    assert_eq!(base.resolve(&within).unwrap().as_str(), "http://h:8/x");
}
