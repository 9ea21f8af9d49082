//! Proxies: `CONNECT` tunnels for `https`, forwarding for `http`, credentials, refusals,
//! `NO_PROXY`, loopback and unusable settings, against a real proxy
//! (`brain_tests::proxy::TestProxy`) and real servers.

use std::time::Duration;

use brain_mcp_transport::{
    BearerToken, ClientConfig, Delivery, HttpClient, ProxyConfig, TransportError,
};
use brain_tests::proxy::{ProxyOptions, TestProxy};
use http::{Method, StatusCode};

use crate::server::{TestServer, handler, json, sse};
use crate::tls::{acceptor, pki, server_config};
use crate::{exchange, notification, post, response};

const PASSWORD: &str = "pr0xy-s3cret";

async fn http_server() -> TestServer {
    TestServer::start(handler(|_| async {
        sse(format!(
            "data: {}\n\ndata: {}\n\n",
            notification(1),
            response(1)
        ))
    }))
    .await
}

fn with_proxy(proxy: ProxyConfig, roots: Option<&crate::tls::Pki>) -> HttpClient {
    let mut c = roots.map_or_else(crate::config, crate::tls::trusting);
    c.proxy = proxy;
    HttpClient::new(c).unwrap()
}

fn uri(s: &str) -> http::Uri {
    s.parse().unwrap()
}

/// The error's message, `Display` and `Debug` together, for checks of what it shows.
fn shown(err: &TransportError) -> String {
    format!("{err} {err:?}")
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_and_keeps_h2() {
    let pki = pki();
    let server = TestServer::start_with(
        handler(|_| async { json(StatusCode::OK, response(1)) }),
        Some(acceptor(&pki)),
    )
    .await;
    let proxy = TestProxy::start(ProxyOptions::default());
    let c = with_proxy(ProxyConfig::url(proxy.url()), Some(&pki));
    let url = uri(&format!("https://localhost:{}/mcp", server.addr.port()));
    for _ in 0..3 {
        let mut req = post(url.clone(), 1);
        req.bearer = Some(BearerToken::new("tok-123"));
        let items = exchange(&c, req).await;
        assert!(items[0].is_final_response);
    }
    let seen = proxy.seen();
    assert_eq!(seen.len(), 1, "one tunnel serves every request: {seen:?}");
    assert_eq!(seen[0].method, Method::CONNECT);
    assert_eq!(seen[0].target, format!("localhost:{}", server.addr.port()));
    // The bearer token travels inside the tunnel only.
    assert_eq!(seen[0].authorization, None);
    let got = server.seen();
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[0].version,
        http::Version::HTTP_2,
        "ALPN runs end to end"
    );
    assert_eq!(got[0].headers["authorization"], "Bearer tok-123");
    assert_eq!(c.pool_stats().connections_opened, 1);
}

#[tokio::test]
async fn http_is_forwarded_in_absolute_form() {
    let server = http_server().await;
    let proxy = TestProxy::start(ProxyOptions::default());
    let c = with_proxy(ProxyConfig::url(proxy.url()), None);
    for _ in 0..2 {
        let items = exchange(&c, post(server.url("/mcp"), 1)).await;
        assert_eq!(items.len(), 2);
    }
    let seen = proxy.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].method, Method::POST);
    assert_eq!(
        seen[0].target,
        format!("http://127.0.0.1:{}/mcp", server.addr.port())
    );
    assert_eq!(seen[0].proxy_authorization, None);
    assert_eq!(server.seen()[0].path, "/mcp");
    assert_eq!(
        c.pool_stats().connections_opened,
        1,
        "the proxy connection is pooled"
    );
}

#[tokio::test]
async fn credentials_go_to_the_proxy_only() {
    let pki = pki();
    let tls_server = TestServer::start_with(
        handler(|_| async { json(StatusCode::OK, response(1)) }),
        Some(acceptor(&pki)),
    )
    .await;
    let server = http_server().await;
    let proxy = TestProxy::start(ProxyOptions::default().credentials("brain", PASSWORD));
    let c = with_proxy(
        ProxyConfig::url(proxy.url_with("brain", PASSWORD)),
        Some(&pki),
    );
    exchange(&c, post(server.url("/mcp"), 1)).await;
    let https = uri(&format!("https://localhost:{}/mcp", tls_server.addr.port()));
    exchange(&c, post(https, 1)).await;
    let seen = proxy.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    // "brain:pr0xy-s3cret"
    let basic = "Basic YnJhaW46cHIweHktczNjcmV0";
    assert_eq!(seen[0].method, Method::POST);
    assert_eq!(seen[0].proxy_authorization.as_deref(), Some(basic));
    assert_eq!(seen[1].method, Method::CONNECT);
    assert_eq!(seen[1].proxy_authorization.as_deref(), Some(basic));
    // Nothing sent inside the tunnel names the proxy's credentials.
    let inside = &tls_server.seen()[0];
    assert!(inside.headers.get("proxy-authorization").is_none());
    assert!(!format!("{c:?}").contains(PASSWORD), "{c:?}");
}

#[tokio::test]
async fn a_proxy_asking_for_credentials_is_a_clear_connect_error() {
    let server = http_server().await;
    let proxy = TestProxy::start(ProxyOptions::default().credentials("brain", PASSWORD));
    let https = uri(&format!("https://localhost:{}/mcp", server.addr.port()));
    for (proxy_url, hint) in [
        (proxy.url(), "it wants credentials"),
        (
            proxy.url_with("brain", "wrong-pass"),
            "did not accept the credentials",
        ),
    ] {
        let c = with_proxy(ProxyConfig::url(&proxy_url), None);
        for url in [server.url("/mcp"), https.clone()] {
            let err = c.post(post(url.clone(), 1)).await.unwrap_err();
            assert!(err.is_connect(), "{err}");
            assert_eq!(err.delivery(), Delivery::NotSent);
            assert_eq!(
                err.proxy_status(),
                Some(StatusCode::PROXY_AUTHENTICATION_REQUIRED)
            );
            let message = err.to_string();
            let origin = format!("http://{}", proxy.addr());
            assert!(
                message.contains(&format!("the proxy {origin} refused the connection: 407")),
                "{message}"
            );
            assert!(message.contains(hint), "{message}");
            assert!(!shown(&err).contains("wrong-pass"), "{err:?}");
        }
    }
    assert!(server.seen().is_empty(), "nothing reached the server");
}

#[tokio::test]
async fn a_refused_or_unreachable_proxy_says_so() {
    let server = http_server().await;
    let https = uri(&format!("https://localhost:{}/mcp", server.addr.port()));
    for code in [403, 502] {
        let proxy = TestProxy::start(ProxyOptions {
            refuse: Some(code),
            ..ProxyOptions::default()
        });
        let c = with_proxy(ProxyConfig::url(proxy.url_with("u", PASSWORD)), None);
        let err = c.post(post(https.clone(), 1)).await.unwrap_err();
        assert!(err.is_connect());
        assert_eq!(err.delivery(), Delivery::NotSent);
        assert_eq!(err.proxy_status().map(|s| s.as_u16()), Some(code));
        assert!(
            err.to_string()
                .contains(&format!("refused the connection: {code}")),
            "{err}"
        );
        assert!(!shown(&err).contains(PASSWORD));
    }
    // Nothing listens on port 9 of loopback.
    let c = with_proxy(
        ProxyConfig::url(format!("http://u:{PASSWORD}@127.0.0.1:9")),
        None,
    );
    let err = c.post(post(https.clone(), 1)).await.unwrap_err();
    assert!(err.is_connect());
    assert_eq!(err.delivery(), Delivery::NotSent);
    assert_eq!(err.proxy_status(), None);
    assert!(
        err.to_string()
            .contains("connecting to the proxy http://127.0.0.1:9 failed"),
        "{err}"
    );
    assert!(!shown(&err).contains(PASSWORD));
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_proxy_that_never_answers_connect_times_out() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            open.push(stream);
        }
    });
    let mut config = crate::config();
    config.proxy = ProxyConfig::url(format!("http://{addr}"));
    config.connect_timeout = Duration::from_millis(300);
    let c = HttpClient::new(config).unwrap();
    let err = c
        .post(post(uri("https://mcp.test/mcp"), 1))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(err.delivery(), Delivery::NotSent);
    assert!(
        err.to_string()
            .contains("did not open a connection within 300 ms"),
        "{err}"
    );
    held.abort();
}

#[tokio::test]
async fn no_proxy_and_loopback_go_direct() {
    let server = http_server().await;
    let proxy = TestProxy::start(ProxyOptions::default().host("mcp.test", server.addr));
    // An explicit list exempts the server.
    let c = with_proxy(
        ProxyConfig::url(proxy.url()).no_proxy("localhost, 127.0.0.0/8"),
        None,
    );
    exchange(&c, post(server.url("/mcp"), 1)).await;
    assert!(proxy.seen().is_empty());
    // Proxies from the environment's variables carry other names (`mcp.test` is known
    // only to the proxy, so reaching it proves the proxy carried the request) ...
    let env = ProxyConfig::from_vars([
        ("HTTP_PROXY", proxy.url()),
        ("NO_PROXY", "skip.test".to_owned()),
    ]);
    let c = with_proxy(env, None);
    let named = uri(&format!("http://mcp.test:{}/mcp", server.addr.port()));
    exchange(&c, post(named, 1)).await;
    assert_eq!(proxy.seen().len(), 1);
    // ... but never loopback, which the proxy could not reach.
    exchange(&c, post(server.url("/mcp"), 1)).await;
    assert_eq!(proxy.seen().len(), 1, "loopback went direct");
    // And NO_PROXY's names never go through it.
    let skipped = c
        .post(post(uri("http://skip.test/mcp"), 1))
        .await
        .unwrap_err();
    assert!(skipped.is_connect(), "resolved directly: {skipped}");
    assert_eq!(proxy.seen().len(), 1);
}

#[tokio::test]
async fn an_unusable_environment_proxy_refuses_what_it_would_carry() {
    let server = http_server().await;
    let c = with_proxy(
        ProxyConfig::from_vars([(
            "ALL_PROXY",
            format!("socks5h://u:{PASSWORD}@127.0.0.1:9050"),
        )]),
        None,
    );
    let err = c
        .post(post(uri("https://mcp.test/mcp"), 1))
        .await
        .unwrap_err();
    assert!(err.is_invalid_request(), "{err}");
    assert_eq!(err.delivery(), Delivery::NotSent);
    assert!(
        err.to_string().contains("ALL_PROXY names a socks proxy"),
        "{err}"
    );
    assert!(!shown(&err).contains(PASSWORD));
    // Loopback is unaffected.
    exchange(&c, post(server.url("/mcp"), 1)).await;
    // An explicit unusable URL fails the build, without its credentials.
    let mut config = ClientConfig::default();
    config.proxy = ProxyConfig::url(format!("socks5://u:{PASSWORD}@h:1"));
    let err = HttpClient::new(config).unwrap_err().to_string();
    assert!(
        err.starts_with("the proxy URL names a socks proxy"),
        "{err}"
    );
    assert!(!err.contains(PASSWORD));
}

#[tokio::test]
async fn an_https_proxy_is_reached_over_tls() {
    let pki = pki();
    let tls_server = TestServer::start_with(
        handler(|_| async { json(StatusCode::OK, response(1)) }),
        Some(acceptor(&pki)),
    )
    .await;
    let server = http_server().await;
    // `mcp.test` resolves nowhere: only the proxy knows it.
    let proxy = TestProxy::start(ProxyOptions {
        tls: Some(server_config(&pki, &[b"http/1.1"])),
        ..ProxyOptions::default()
            .credentials("brain", PASSWORD)
            .host("mcp.test", tls_server.addr)
    });
    let proxy_url = format!("https://brain:{PASSWORD}@localhost:{}", proxy.addr().port());
    let c = with_proxy(ProxyConfig::url(proxy_url), Some(&pki));
    let https = uri(&format!("https://mcp.test:{}/mcp", tls_server.addr.port()));
    exchange(&c, post(https, 1)).await;
    exchange(&c, post(server.url("/mcp"), 1)).await;
    let seen = proxy.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].method, Method::CONNECT);
    assert_eq!(seen[1].method, Method::POST);
    assert!(
        seen.iter()
            .all(|s| s.proxy_authorization.is_some() && s.status == 200)
    );
    assert_eq!(tls_server.seen().len(), 1);
    assert_eq!(server.seen().len(), 1);
}
