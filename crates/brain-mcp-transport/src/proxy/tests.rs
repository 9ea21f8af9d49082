//! The rules the variables give, read from given values (never the process environment,
//! which tests running in parallel share).

use super::*;

fn rules(vars: &[(&str, &str)]) -> Proxies {
    let get = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
            .ok_or(VarError::NotPresent)
    };
    from_lookup(&get, None)
}

fn u(s: &str) -> Uri {
    s.parse().unwrap()
}

/// `direct`, `refused: ...`, or the proxy's URI.
fn route(p: &Proxies, dst: &str) -> String {
    match p.route(&u(dst)) {
        Route::Direct => "direct".to_owned(),
        Route::Refused(why) => format!("refused: {why}"),
        Route::Via(i) => i.uri().to_string(),
    }
}

#[test]
fn schemes_pick_their_variable_and_all_proxy_fills_in() {
    let p = rules(&[
        ("HTTPS_PROXY", "http://secure:1"),
        ("http_proxy", "plain:2"),
        ("ALL_PROXY", "http://all:3"),
    ]);
    assert_eq!(route(&p, "https://example.com/mcp"), "http://secure:1/");
    // No scheme means http, as curl reads it.
    assert_eq!(route(&p, "http://example.com/mcp"), "http://plain:2/");
    let p = rules(&[("all_proxy", "http://all:3")]);
    assert_eq!(route(&p, "https://example.com/"), "http://all:3/");
    assert_eq!(route(&p, "http://example.com/"), "http://all:3/");
    assert_eq!(route(&rules(&[]), "https://example.com/"), "direct");
    // Upper case first; an empty value is unset.
    let p = rules(&[
        ("HTTPS_PROXY", "http://upper:1"),
        ("https_proxy", "http://lower:2"),
    ]);
    assert_eq!(route(&p, "https://example.com/"), "http://upper:1/");
    let p = rules(&[("HTTPS_PROXY", " "), ("https_proxy", "http://lower:2")]);
    assert_eq!(route(&p, "https://example.com/"), "http://lower:2/");
}

#[test]
fn no_proxy_follows_curl() {
    let p = rules(&[
        ("HTTPS_PROXY", "http://proxy:1"),
        (
            "NO_PROXY",
            "internal.example, .corp, 10.0.0.0/8, 192.168.1.7, [fd00::1]",
        ),
    ]);
    for direct in [
        "https://internal.example/",
        "https://a.internal.example/",
        "https://corp/",
        "https://x.corp:8443/",
        "https://10.1.2.3/",
        "https://192.168.1.7/",
    ] {
        assert_eq!(route(&p, direct), "direct", "{direct}");
    }
    for proxied in [
        "https://notinternal.example/",
        "https://example.com/",
        "https://192.168.1.8/",
        "https://11.0.0.1/",
    ] {
        assert_eq!(route(&p, proxied), "http://proxy:1/", "{proxied}");
    }
    let all = rules(&[("HTTPS_PROXY", "http://proxy:1"), ("no_proxy", "*")]);
    assert_eq!(route(&all, "https://example.com/"), "direct");
}

#[test]
fn loopback_never_goes_through_an_environment_proxy() {
    let p = rules(&[
        ("HTTPS_PROXY", "http://proxy:1"),
        ("HTTP_PROXY", "http://proxy:1"),
    ]);
    for dst in [
        "http://127.0.0.1:8080/mcp",
        "http://127.9.9.9/",
        "https://localhost:8443/",
        "https://LOCALHOST./",
        "https://mcp.localhost/",
        "http://[::1]:80/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        assert_eq!(route(&p, dst), "direct", "{dst}");
    }
    assert_eq!(route(&p, "http://localhost.example/"), "http://proxy:1/");
    assert_eq!(route(&p, "http://128.0.0.1/"), "http://proxy:1/");
}

#[test]
fn an_explicit_proxy_carries_loopback_unless_its_list_exempts_it() {
    let p = ProxyConfig::url("http://proxy:1").resolve().unwrap();
    assert_eq!(route(&p, "http://127.0.0.1:9/"), "http://proxy:1/");
    assert_eq!(route(&p, "https://example.com/"), "http://proxy:1/");
    let p = ProxyConfig::url("http://proxy:1")
        .no_proxy("127.0.0.1")
        .resolve()
        .unwrap();
    assert_eq!(route(&p, "http://127.0.0.1:9/"), "direct");
    let off = ProxyConfig::none().resolve().unwrap();
    assert_eq!(route(&off, "https://example.com/"), "direct");
}

#[test]
fn unusable_settings_refuse_what_they_would_carry() {
    let p = rules(&[
        ("ALL_PROXY", "socks5h://user:s3cret@127.0.0.1:9050"),
        ("NO_PROXY", "internal.example"),
    ]);
    let why = route(&p, "https://example.com/");
    assert_eq!(
        why,
        "refused: ALL_PROXY names a socks proxy, which is not supported: use an http:// or https:// proxy"
    );
    assert!(!why.contains("s3cret"));
    // What NO_PROXY exempts, and loopback, still go directly.
    assert_eq!(route(&p, "https://internal.example/"), "direct");
    assert_eq!(route(&p, "https://127.0.0.1/"), "direct");
    let p = rules(&[("HTTPS_PROXY", "ftp://p:1"), ("HTTP_PROXY", "http://ok:1")]);
    assert_eq!(
        route(&p, "https://example.com/"),
        "refused: HTTPS_PROXY has a scheme other than http:// or https://"
    );
    assert_eq!(route(&p, "http://example.com/"), "http://ok:1/");
    let p = rules(&[("HTTPS_PROXY", "http://")]);
    assert!(route(&p, "https://example.com/").starts_with("refused: HTTPS_PROXY "));
}

#[test]
fn an_unusable_explicit_url_fails_the_build_without_its_credentials() {
    for (url, reason) in [
        (
            "socks5://u:s3cret@h:1",
            "the proxy URL names a socks proxy, which is not supported: use an http:// or https:// proxy",
        ),
        (
            "not a url",
            "the proxy URL is not a URL (write http://host:port)",
        ),
        (
            "ftp://u:s3cret@h:1",
            "the proxy URL has a scheme other than http:// or https://",
        ),
    ] {
        let err = ProxyConfig::url(url).resolve().err().unwrap();
        assert_eq!(err.to_string(), reason, "{url}");
    }
    assert!(
        ProxyConfig::url("https://u:p@proxy.example:3129")
            .resolve()
            .is_ok()
    );
}

#[test]
fn cgi_ignores_upper_case_http_proxy() {
    let p = rules(&[("REQUEST_METHOD", "GET"), ("HTTP_PROXY", "http://evil:1")]);
    assert_eq!(route(&p, "http://example.com/"), "direct");
    let p = rules(&[("REQUEST_METHOD", "GET"), ("http_proxy", "http://ok:1")]);
    assert_eq!(route(&p, "http://example.com/"), "http://ok:1/");
}

#[test]
fn credentials_become_basic_auth_and_are_never_shown() {
    let p = rules(&[("HTTPS_PROXY", "http://Aladdin:open%20sesame@proxy:1")]);
    let Route::Via(i) = p.route(&u("https://example.com/")) else {
        panic!("proxied");
    };
    // "Aladdin:open sesame"
    assert_eq!(
        i.basic_auth().unwrap(),
        "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
    );
    assert!(i.basic_auth().unwrap().is_sensitive());
    assert!(!i.uri().to_string().contains("Aladdin"));
    let config = ProxyConfig::url("http://Aladdin:s3cret@proxy:1").no_proxy(".corp");
    let shown = format!("{config:?}");
    assert_eq!(
        shown,
        r#"ProxyConfig { url: "http://proxy:1", no_proxy: Some(".corp") }"#
    );
    let vars = ProxyConfig::from_vars([("HTTPS_PROXY", "http://u:s3cret@p:1")]);
    assert!(!format!("{vars:?}").contains("s3cret"), "{vars:?}");
    assert!(!format!("{:?}", ProxyConfig::from_env()).contains("s3cret"));
}

#[test]
fn from_vars_reads_like_the_environment() {
    let p = ProxyConfig::from_vars([("https_proxy", "http://p:1"), ("NO_PROXY", "skip.example")])
        .resolve()
        .unwrap();
    assert_eq!(route(&p, "https://example.com/"), "http://p:1/");
    assert_eq!(route(&p, "https://skip.example/"), "direct");
    assert_eq!(route(&p, "https://127.0.0.1/"), "direct");
    // An explicit list replaces NO_PROXY.
    let p = ProxyConfig::from_vars([("https_proxy", "http://p:1"), ("NO_PROXY", "skip.example")])
        .no_proxy("other.example")
        .resolve()
        .unwrap();
    assert_eq!(route(&p, "https://skip.example/"), "http://p:1/");
    assert_eq!(route(&p, "https://other.example/"), "direct");
}

#[test]
fn a_star_exempts_ip_literals_too() {
    // `NO_PROXY=*` means every destination, IP literals included, over http and https.
    let p = rules(&[
        ("HTTP_PROXY", "http://proxy:1"),
        ("HTTPS_PROXY", "http://proxy:1"),
        ("NO_PROXY", "*"),
    ]);
    for dst in [
        "http://192.0.2.1:8080/mcp",
        "http://[2001:db8::1]:8080/mcp",
        "https://192.0.2.1/",
        "https://example.com/",
    ] {
        assert_eq!(route(&p, dst), "direct", "{dst}");
    }
}

#[test]
fn one_trailing_dot_is_ignored_on_both_sides() {
    let p = rules(&[
        ("HTTP_PROXY", "http://proxy:1"),
        ("NO_PROXY", "internal.test"),
    ]);
    assert_eq!(route(&p, "http://mcp.internal.test.:8080/mcp"), "direct");
    let p = rules(&[
        ("HTTP_PROXY", "http://proxy:1"),
        ("NO_PROXY", "internal.test."),
    ]);
    assert_eq!(route(&p, "http://mcp.internal.test/mcp"), "direct");
    assert_eq!(route(&p, "http://mcp.other.test/mcp"), "http://proxy:1/");
}

#[test]
fn blocks_of_both_families_match_as_curl_and_go_do() {
    let p = rules(&[
        ("HTTP_PROXY", "http://proxy:1"),
        ("NO_PROXY", "10.0.0.0/8, fd00::/8"),
    ]);
    assert_eq!(route(&p, "http://10.9.8.7/"), "direct");
    assert_eq!(route(&p, "http://[fd00::42]:8080/"), "direct");
    assert_eq!(route(&p, "http://[fe80::1]/"), "http://proxy:1/");
    assert_eq!(route(&p, "http://11.0.0.1/"), "http://proxy:1/");
}

#[test]
fn proxy_credentials_are_secrets_in_every_form_they_are_sent() {
    let p = rules(&[("HTTPS_PROXY", "http://us%65r:p%40ss-w0rd@proxy:1")]);
    let secrets = p.secrets();
    // The decoded password, `user:password`, and the Basic value.
    for form in ["p@ss-w0rd", "user:p@ss-w0rd", "dXNlcjpwQHNzLXcwcmQ="] {
        assert_eq!(secrets.redact(form), "[redacted]", "{form}");
    }
    // No credentials, none of the proxy's own (the process may know others).
    assert_eq!(
        rules(&[("HTTPS_PROXY", "http://proxy:1")]).secrets().len(),
        0
    );
    let explicit = ProxyConfig::url("http://a:b-secret@proxy:1")
        .resolve()
        .unwrap();
    assert_eq!(explicit.secrets().redact("x b-secret y"), "x [redacted] y");
}
