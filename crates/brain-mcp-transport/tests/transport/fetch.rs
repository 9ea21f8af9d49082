//! Authorization's small exchanges: bounded, timed, never following a redirect.

use std::time::Duration;

use brain_mcp_transport::{FetchRequest, Header, Secrets};
use bytes::Bytes;
use http::{Response, StatusCode};

use crate::client;
use crate::server::{Reply, TestBody, TestServer, handler, json};

#[tokio::test]
async fn a_form_post_reads_the_answer_whatever_its_status() {
    let server = TestServer::start(handler(|seen| async move {
        if seen.body.as_ref() == b"grant_type=client_credentials" {
            json(StatusCode::BAD_REQUEST, r#"{"error":"invalid_client"}"#)
        } else {
            json(StatusCode::OK, "{}")
        }
    }))
    .await;
    let mut req = FetchRequest::post(
        server.url("/token"),
        "application/x-www-form-urlencoded",
        Bytes::from_static(b"grant_type=client_credentials"),
        Duration::from_secs(5),
    );
    req.headers = vec![Header::sensitive(
        "authorization",
        "Basic c2VjcmV0".to_owned(),
    )];
    let got = client().fetch(req).await.unwrap();
    assert_eq!(got.status, 400);
    assert_eq!(got.body.as_ref(), br#"{"error":"invalid_client"}"#);
    let seen = &server.seen()[0];
    assert_eq!(seen.method, http::Method::POST);
    assert_eq!(
        seen.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(seen.headers["authorization"], "Basic c2VjcmV0");
}

#[tokio::test]
async fn a_redirect_is_returned_not_followed() {
    let server = TestServer::start(handler(|_| async {
        Reply::Respond(
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", "http://localhost:1/cb?code=abc&state=s")
                .body(TestBody::empty())
                .unwrap(),
        )
    }))
    .await;
    let got = client()
        .fetch(FetchRequest::get(
            server.url("/authorize"),
            Duration::from_secs(5),
        ))
        .await
        .unwrap();
    assert_eq!(got.status, 302);
    assert_eq!(
        got.location.as_deref(),
        Some("http://localhost:1/cb?code=abc&state=s")
    );
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn an_answer_over_the_bound_fails_and_names_no_secret() {
    let server = TestServer::start(handler(|_| async {
        json(StatusCode::OK, format!("\"{}\"", "x".repeat(100_000)))
    }))
    .await;
    let mut req = FetchRequest::get(server.url("/.well-known/x"), Duration::from_secs(5));
    req.limit = 1024;
    let err = client().fetch(req).await.unwrap_err();
    assert!(err.is_body_too_large(), "{err}");
    assert_eq!(err.body_limit(), Some(1024));
    // The deadline covers a server that never answers.
    let slow = TestServer::start(handler(|_| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        json(StatusCode::OK, "{}")
    }))
    .await;
    let mut req = FetchRequest::get(slow.url("/doc?key=hunter2"), Duration::from_millis(200));
    req.secrets = Secrets::new(Some("hunter2"));
    let err = client().fetch(req).await.unwrap_err();
    assert!(err.is_timeout());
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

/// A fetch under the destination rule, for a server on loopback: over https to a
/// `localhost` name (the certificate checked by that name on the connection of its own,
/// h2 as ALPN picks), with its body and headers, and each one on a new connection.
#[tokio::test]
async fn a_checked_fetch_goes_over_tls_on_a_connection_of_its_own() {
    use brain_mcp_transport::{AddrClass, Destinations, HttpClient};
    let pki = crate::tls::pki();
    let server = TestServer::start_with(
        handler(|seen| async move {
            if seen.body.as_ref() == b"grant_type=client_credentials" {
                json(StatusCode::OK, r#"{"access_token":"t"}"#)
            } else {
                json(StatusCode::BAD_REQUEST, "{}")
            }
        }),
        Some(crate::tls::acceptor(&pki)),
    )
    .await;
    let c = HttpClient::new(crate::tls::trusting(&pki)).unwrap();
    let url: http::Uri = format!("https://localhost:{}/token", server.addr.port())
        .parse()
        .unwrap();
    for round in 1..=2 {
        let mut req = FetchRequest::post(
            url.clone(),
            "application/x-www-form-urlencoded",
            Bytes::from_static(b"grant_type=client_credentials"),
            Duration::from_secs(5),
        );
        req.headers = vec![Header::sensitive(
            "authorization",
            "Basic c2VjcmV0".to_owned(),
        )];
        req.destinations = Some(Destinations::new(AddrClass::Loopback, false));
        let got = c.fetch(req).await.unwrap();
        assert_eq!(got.status, 200);
        assert_eq!(got.body.as_ref(), br#"{"access_token":"t"}"#);
        assert_eq!(server.accepted(), round, "a new connection each time");
    }
    let seen = &server.seen()[0];
    assert_eq!(seen.version, http::Version::HTTP_2);
    assert_eq!(seen.headers["authorization"], "Basic c2VjcmV0");
    // The same URL for a server elsewhere: refused, nothing more accepted.
    let mut req = FetchRequest::get(url, Duration::from_secs(5));
    req.destinations = Some(Destinations::new(AddrClass::Public, true));
    let err = c.fetch(req).await.unwrap_err();
    assert!(err.is_destination());
    assert_eq!(server.accepted(), 2);
}
