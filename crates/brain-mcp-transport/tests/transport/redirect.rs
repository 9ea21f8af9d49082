//! Redirects: same-origin 307/308 followed; anything else refused before sending.

use brain_mcp_transport::{BearerToken, Delivery};
use http::{Response, StatusCode};

use crate::server::{Reply, TestBody, TestServer, handler, json};
use crate::{client, exchange, post, response};

fn redirect(code: StatusCode, location: String) -> Reply {
    Reply::Respond(
        Response::builder()
            .status(code)
            .header("location", location)
            .body(TestBody::empty())
            .unwrap(),
    )
}

#[tokio::test]
async fn same_origin_307_is_followed_with_body_and_headers() {
    let server = TestServer::start(handler(|seen| async move {
        match seen.path.as_str() {
            "/mcp" => redirect(StatusCode::TEMPORARY_REDIRECT, "/mcp/".into()),
            "/mcp/" => redirect(StatusCode::PERMANENT_REDIRECT, "final".into()),
            _ => json(StatusCode::OK, response(1)),
        }
    }))
    .await;
    let mut req = post(server.url("/mcp"), 1);
    req.bearer = Some(BearerToken::new("tok"));
    let items = exchange(&client(), req).await;
    assert!(items[0].is_final_response);
    let seen = server.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    // A relative reference resolves against the current path.
    assert_eq!(paths, ["/mcp", "/mcp/", "/mcp/final"]);
    for s in &seen {
        assert_eq!(s.method, http::Method::POST);
        assert_eq!(s.body, seen[0].body);
        assert_eq!(s.headers["authorization"], "Bearer tok");
    }
}

#[tokio::test]
async fn a_cross_origin_redirect_sends_nothing_to_the_other_origin() {
    let other = TestServer::start(handler(|_| async { json(StatusCode::OK, response(1)) })).await;
    let target = other.url("/steal").to_string();
    let server = TestServer::start(handler(move |_| {
        let target = target.clone();
        async move { redirect(StatusCode::TEMPORARY_REDIRECT, target) }
    }))
    .await;
    let mut req = post(server.url("/mcp"), 1);
    req.bearer = Some(BearerToken::new("secret-key"));
    let err = client().post(req).await.unwrap_err();
    assert!(err.is_redirect());
    assert_eq!(err.delivery(), Delivery::Answered);
    assert!(!err.to_string().contains("secret-key"));
    assert_eq!(
        other.accepted(),
        0,
        "the other origin must see no connection"
    );
    assert!(other.seen().is_empty());
}

#[tokio::test]
async fn other_redirects_and_loops_are_refused() {
    let server = TestServer::start(handler(|seen| async move {
        match seen.path.as_str() {
            "/found" => redirect(StatusCode::FOUND, "/x".into()),
            _ => redirect(StatusCode::TEMPORARY_REDIRECT, "/loop".into()),
        }
    }))
    .await;
    let c = client();
    let err = c.post(post(server.url("/found"), 1)).await.unwrap_err();
    assert!(err.is_redirect());
    let err = c.post(post(server.url("/loop"), 1)).await.unwrap_err();
    assert!(err.is_redirect());
    assert!(err.to_string().contains("too many"));
    // `/found` once; `/loop` as sent plus three followed hops.
    assert_eq!(server.seen().len(), 1 + 4);
}
