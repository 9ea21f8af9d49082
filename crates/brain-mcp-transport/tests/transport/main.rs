//! Integration tests of the transport against real in-process servers and child processes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test
#![allow(missing_docs, unreachable_pub)] // test helpers are neither API nor documented

mod debug;
mod exchange;
mod faults;
mod fetch;
mod h2_streams;
mod pool;
mod progress;
mod proxy;
mod redirect;
mod resume;
mod server;
mod stdio;
mod tls;

use brain_mcp_proto::jsonrpc::{self, Inbound};
use brain_mcp_transport::{
    ClientConfig, Expect, HttpClient, PostReply, PostRequest, Received, ReplyStream, RequestId,
    TransportError,
};

/// A decoded message written back as compact JSON (the member order the tests' own
/// messages use), to compare with what the server sent.
pub fn text(message: &Inbound) -> String {
    let bytes = match message {
        Inbound::Request { id, method, params } => {
            jsonrpc::encode_request(id, method, params).unwrap()
        }
        Inbound::Notification { method, params } => {
            jsonrpc::encode_notification(method, params.as_deref()).unwrap()
        }
        Inbound::Response { id, result } => jsonrpc::encode_response(id, result).unwrap(),
        Inbound::Error {
            id,
            code,
            message,
            data,
        } => {
            let data: Option<serde_json::Value> = data
                .as_ref()
                .map(|d| serde_json::from_str(d.get()).unwrap());
            jsonrpc::encode_error(id.as_ref(), *code, message, data.as_ref())
        }
    };
    String::from_utf8(bytes).unwrap()
}

pub fn config() -> ClientConfig {
    {
        let mut c = ClientConfig::default();
        c.native_roots = false;
        c
    }
}

pub fn client() -> HttpClient {
    HttpClient::new(config()).expect("client")
}

pub fn request_body(id: i64, method: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#)
}

pub fn response(id: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":true}}}}"#)
}

pub fn notification(n: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"n":{n}}}}}"#)
}

/// A `tools/list`-like request (idempotent) with id `id`.
pub fn post(url: http::Uri, id: i64) -> PostRequest {
    let mut req = PostRequest::new(
        url,
        request_body(id, "tools/list"),
        Expect::Response(RequestId::Number(id)),
    );
    req.idempotent = true;
    req
}

pub fn notify(url: http::Uri) -> PostRequest {
    PostRequest::new(
        url,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Expect::Accepted,
    )
}

pub fn stream(reply: PostReply) -> ReplyStream {
    match reply {
        PostReply::Stream(s) => s,
        PostReply::Accepted => panic!("expected a reply stream, got Accepted"),
    }
}

/// Every item until the stream ends; the error (if any) is last.
pub async fn drain(s: &mut ReplyStream) -> (Vec<Received>, Option<TransportError>) {
    let mut items = Vec::new();
    while let Some(item) = s.next().await {
        match item {
            Ok(i) => items.push(i),
            Err(e) => return (items, Some(e)),
        }
    }
    (items, None)
}

/// Posts and reads the whole reply, expecting success.
pub async fn exchange(c: &HttpClient, req: PostRequest) -> Vec<Received> {
    let mut s = stream(c.post(req).await.expect("post"));
    let (items, err) = drain(&mut s).await;
    assert!(err.is_none(), "unexpected error {err:?}");
    items
}
