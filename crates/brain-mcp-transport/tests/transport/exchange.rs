//! JSON and SSE replies, headers, accepted notifications, typed reply errors.

use std::time::Duration;

use brain_mcp_transport::{
    BearerToken, ContentType, Delivery, ErrorCode, Header, PostReply, Secrets,
};
use bytes::Bytes;
use http::{Response, StatusCode};

use crate::server::{Reply, TestBody, TestServer, handler, json, sse, status};
use crate::{client, drain, exchange, notification, notify, post, response, stream};

#[tokio::test]
async fn json_reply_with_headers_and_session() {
    let server = TestServer::start(handler(|seen| async move {
        let id: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
        assert_eq!(id["method"], "tools/list");
        Reply::Respond(
            Response::builder()
                .header("content-type", "Application/JSON; charset=utf-8")
                .header("mcp-session-id", "sess-1")
                .body(TestBody::full(response(7)))
                .unwrap(),
        )
    }))
    .await;
    let c = client();
    let mut req = post(server.url("/mcp"), 7);
    req.headers = vec![
        Header::sensitive("mcp-session-id", "old-1"),
        Header::new("mcp-protocol-version", "2026-07-28"),
        Header::new("mcp-method", "tools/list"),
        Header::new("mcp-name", "x"),
        Header::new("Mcp-Param-Region", "eu"),
    ];
    req.bearer = Some(BearerToken::new("tok-123"));
    let mut s = stream(c.post(req).await.unwrap());
    assert_eq!(s.session_id(), Some("sess-1"));
    assert_eq!(s.content_type(), ContentType::Json);
    let (items, err) = drain(&mut s).await;
    assert!(err.is_none());
    assert_eq!(items.len(), 1);
    assert!(items[0].is_final_response);
    assert_eq!(crate::text(&items[0].message), response(7));
    let seen = &server.seen()[0];
    let h = &seen.headers;
    assert_eq!(h["accept"], "application/json, text/event-stream");
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["mcp-session-id"], "old-1");
    assert_eq!(h["mcp-protocol-version"], "2026-07-28");
    assert_eq!(h["mcp-method"], "tools/list");
    assert_eq!(h["mcp-name"], "x");
    assert_eq!(h["mcp-param-region"], "eu");
    assert_eq!(h["authorization"], "Bearer tok-123");
}

#[tokio::test]
async fn sse_reply_yields_messages_in_order_and_ends_at_our_response() {
    let body = format!(
        "id: p\ndata:\n\n: keep-alive\nevent: message\nid: 1\ndata: {}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{{}}}}\n\n\
         id: 9\ndata: {}\n\ndata: {}\n\n",
        notification(1),
        response(5),
        notification(2),
    );
    let server = TestServer::start(handler(move |_| {
        let body = body.clone();
        async move { sse(body) }
    }))
    .await;
    let c = client();
    let mut s = stream(c.post(post(server.url("/mcp"), 5)).await.unwrap());
    assert_eq!(s.content_type(), ContentType::EventStream);
    let (items, err) = drain(&mut s).await;
    assert!(err.is_none(), "{err:?}");
    let texts: Vec<String> = items.iter().map(|i| crate::text(&i.message)).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(texts[0], notification(1));
    assert!(texts[1].contains("\"ping\""));
    // A multi-line data field is joined with a newline, and the response to another
    // id is passed on without ending the stream.
    assert_eq!(texts[2], "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
    assert!(!items[2].is_final_response);
    assert_eq!(texts[3], response(5));
    assert!(items[3].is_final_response);
    assert_eq!(items[0].event_id.as_deref(), Some("1"));
    assert_eq!(items[3].event_id.as_deref(), Some("9"));
    // Nothing after our response is delivered.
    assert!(s.next().await.is_none());
}

async fn chunked_sse(sep: &'static str) {
    let server = TestServer::start(handler(move |_| async move {
        let (tx, body) = TestBody::channel();
        tokio::spawn(async move {
            let text = format!(
                "\u{FEFF}id: a{sep}data: {}{sep}{sep}data: {}{sep}{sep}",
                notification(1),
                response(1)
            );
            // Send byte by byte so every line end is split from its neighbours.
            for b in text.into_bytes() {
                if tx.send(Ok(Bytes::from(vec![b]))).await.is_err() {
                    return;
                }
            }
        });
        Reply::Respond(
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap(),
        )
    }))
    .await;
    let items = exchange(&client(), post(server.url("/mcp"), 1)).await;
    assert_eq!(items.len(), 2, "separator {sep:?}");
    assert_eq!(crate::text(&items[0].message), notification(1));
    assert_eq!(crate::text(&items[1].message), response(1));
    assert!(items[1].is_final_response);
}

#[tokio::test]
async fn sse_with_crlf_line_ends_split_across_chunks() {
    chunked_sse("\r\n").await;
}

#[tokio::test]
async fn sse_with_cr_line_ends() {
    chunked_sse("\r").await;
}

#[tokio::test]
async fn notifications_are_accepted_with_202_204_or_empty_200() {
    for code in [StatusCode::ACCEPTED, StatusCode::NO_CONTENT, StatusCode::OK] {
        let server = TestServer::start(handler(move |_| async move { status(code) })).await;
        let reply = client().post(notify(server.url("/mcp"))).await.unwrap();
        assert!(matches!(reply, PostReply::Accepted), "{code}");
    }
}

#[tokio::test]
async fn a_request_answered_with_202_is_an_error_at_once() {
    let server = TestServer::start(handler(|_| async { status(StatusCode::ACCEPTED) })).await;
    let err = client()
        .post(post(server.url("/mcp"), 1))
        .await
        .unwrap_err();
    assert!(err.is_unexpected_reply());
    assert_eq!(err.delivery(), Delivery::Answered);
    assert!(err.to_string().contains("202"), "{err}");
}

#[tokio::test]
async fn a_json_body_with_the_wrong_id_is_an_error() {
    for body in [response(99), notification(1)] {
        let server = TestServer::start(handler(move |_| {
            let body = body.clone();
            async move { json(StatusCode::OK, body) }
        }))
        .await;
        let mut s = stream(client().post(post(server.url("/mcp"), 1)).await.unwrap());
        let (items, err) = drain(&mut s).await;
        assert!(items.is_empty());
        let err = err.expect("an error");
        assert!(err.is_unexpected_reply());
        assert!(err.to_string().contains("request 1"), "{err}");
    }
}

#[tokio::test]
async fn an_unknown_content_type_is_an_error() {
    let server = TestServer::start(handler(|_| async {
        Reply::Respond(
            Response::builder()
                .header("content-type", "text/html")
                .body(TestBody::full("<html>"))
                .unwrap(),
        )
    }))
    .await;
    let err = client()
        .post(post(server.url("/mcp"), 1))
        .await
        .unwrap_err();
    assert!(err.is_unexpected_reply());
    assert!(err.to_string().contains("text/html"));
}

#[tokio::test]
async fn duplicate_or_joined_session_headers_are_rejected() {
    for values in [&["a1", "a1"][..], &["a1, a1"][..], &["a 1"][..]] {
        let server = TestServer::start(handler(move |_| async move {
            let mut b = Response::builder().header("content-type", "application/json");
            for v in values {
                b = b.header("mcp-session-id", *v);
            }
            Reply::Respond(b.body(TestBody::full(response(1))).unwrap())
        }))
        .await;
        let err = client()
            .post(post(server.url("/mcp"), 1))
            .await
            .unwrap_err();
        assert!(err.is_invalid_session_id(), "{values:?}");
    }
}

#[tokio::test]
async fn not_found_is_a_status_whatever_the_headers() {
    // What a 404 means (an expired session) is the client core's to say, not the transport's.
    let server = TestServer::start(handler(|_| async { status(StatusCode::NOT_FOUND) })).await;
    let c = client();
    let mut req = post(server.url("/mcp"), 1);
    req.headers = vec![Header::sensitive("mcp-session-id", "s-1")];
    let err = c.post(req).await.unwrap_err();
    assert!(err.is_status(), "{err}");
    assert_eq!(err.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(err.delivery(), Delivery::Answered);
}

#[tokio::test]
async fn error_statuses_carry_the_json_rpc_error_and_www_authenticate() {
    let server = TestServer::start(handler(|seen| async move {
        if seen.path == "/auth" {
            return Reply::Respond(
                Response::builder()
                    .status(StatusCode::UNAUTHORIZED)
                    .header("www-authenticate", "Bearer realm=\"mcp\"")
                    .body(TestBody::empty())
                    .unwrap(),
            );
        }
        let mut resp = json(
            StatusCode::BAD_REQUEST,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"]}}}"#,
        );
        if let Reply::Respond(r) = &mut resp {
            r.headers_mut().insert("retry-after", http::HeaderValue::from_static("7"));
        }
        resp
    }))
    .await;
    let c = client();
    let mut req = post(server.url("/mcp"), 1);
    req.bearer = Some(BearerToken::new("very-secret-token"));
    let err = c.post(req.clone()).await.unwrap_err();
    assert!(err.is_status(), "{err:?}");
    assert_eq!(err.status(), Some(StatusCode::BAD_REQUEST));
    let rpc = err.rpc_error().expect("the JSON-RPC error");
    assert_eq!(rpc.code, ErrorCode(-32022));
    assert_eq!(rpc.message, "unsupported");
    // `data` is kept: the supported versions are not lost.
    assert_eq!(rpc.supported_versions(), ["2026-07-28"]);
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(err.www_authenticate(), None);
    assert!(!format!("{err} {err:?}").contains("very-secret-token"));
    req.url = server.url("/auth");
    let err = c.post(req).await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::UNAUTHORIZED), "{err:?}");
    assert_eq!(err.www_authenticate(), Some("Bearer realm=\"mcp\""));
    assert!(!format!("{err} {err:?}").contains("very-secret-token"));
}

#[tokio::test]
async fn delete_returns_the_status_and_is_bounded() {
    let server = TestServer::start(handler(|seen| async move {
        match seen.path.as_str() {
            "/gone" => status(StatusCode::METHOD_NOT_ALLOWED),
            "/stall" => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                status(StatusCode::OK)
            }
            _ => status(StatusCode::OK),
        }
    }))
    .await;
    let c = client();
    let h = vec![
        Header::sensitive("mcp-session-id", "s-9"),
        Header::new("mcp-protocol-version", "2025-11-25"),
    ];
    let d = Duration::from_secs(2);
    let ok = c
        .delete(&server.url("/mcp"), &h, None, &Secrets::none(), d)
        .await
        .unwrap();
    assert_eq!(ok, StatusCode::OK);
    let gone = c
        .delete(&server.url("/gone"), &h, None, &Secrets::none(), d)
        .await
        .unwrap();
    assert_eq!(gone, StatusCode::METHOD_NOT_ALLOWED);
    let seen = &server.seen()[0];
    assert_eq!(seen.method, http::Method::DELETE);
    assert_eq!(seen.headers["mcp-session-id"], "s-9");
    assert_eq!(seen.headers["mcp-protocol-version"], "2025-11-25");
    assert!(seen.headers.get("mcp-method").is_none());
    let start = std::time::Instant::now();
    let err = c
        .delete(
            &server.url("/stall"),
            &h,
            None,
            &Secrets::none(),
            Duration::from_millis(200),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_notification_answered_with_an_open_event_stream_does_not_hang() {
    let server = TestServer::start(handler(|_| async {
        let (tx, body) = TestBody::channel();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(tx);
        });
        Reply::Respond(
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap(),
        )
    }))
    .await;
    let reply = tokio::time::timeout(
        Duration::from_secs(2),
        client().post(notify(server.url("/mcp"))),
    )
    .await
    .expect("no hang")
    .unwrap();
    assert!(matches!(reply, PostReply::Accepted));
}

#[tokio::test]
async fn a_json_batch_reply_is_split_into_messages() {
    let body = format!("[{}, {}]", notification(1), response(1));
    let server = TestServer::start(handler(move |_| {
        let body = body.clone();
        async move { json(StatusCode::OK, body) }
    }))
    .await;
    let items = exchange(&client(), post(server.url("/mcp"), 1)).await;
    assert_eq!(items.len(), 2);
    assert_eq!(crate::text(&items[0].message), notification(1));
    assert!(!items[0].is_final_response);
    assert_eq!(crate::text(&items[1].message), response(1));
    assert!(items[1].is_final_response);
}
