//! Authorization's small exchanges: bounded, timed, never following a redirect.

use std::time::Duration;

use brain_mcp_transport::{ErrorKind, FetchRequest, Header, Secrets};
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
    assert!(
        matches!(err.kind(), ErrorKind::BodyTooLarge { limit: 1024 }),
        "{err}"
    );
    // The deadline covers a server that never answers.
    let slow = TestServer::start(handler(|_| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        json(StatusCode::OK, "{}")
    }))
    .await;
    let mut req = FetchRequest::get(slow.url("/doc?key=hunter2"), Duration::from_millis(200));
    req.secrets = Secrets::new(Some("hunter2"));
    let err = client().fetch(req).await.unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Timeout);
    assert!(!err.to_string().contains("hunter2"), "{err}");
}
