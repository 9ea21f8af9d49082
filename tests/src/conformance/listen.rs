//! The handshake era's standalone `GET` event stream, on which a server sends requests
//! that belong to no client request (the conformance elicitation server asks there).
//!
//! `brain-mcp-transport` only issues `GET`s to resume a broken reply stream (Brain
//! never waits for unsolicited server requests), so this client opens its own: plain
//! `http` over one hyper HTTP/1.1 connection, decoded with the transport's public SSE
//! decoder. Messages are handed over a bounded channel; the task ends with the stream.

use brain_mcp_transport::sse::SseDecoder;
use bytes::Bytes;
use http::{Method, Request, Uri};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;

use super::error::ClientError;

/// Largest SSE event accepted on the stream.
const EVENT_LIMIT: usize = 1 << 20;
/// Messages buffered before the reader waits for the session to take them.
const QUEUE: usize = 16;

/// Opens the stream with `headers` and returns the channel of message texts. An
/// answer other than `200` means the server offers no such stream: `None`.
pub(crate) async fn open(
    url: &Uri,
    headers: &[(&'static str, String)],
) -> Result<Option<mpsc::Receiver<String>>, ClientError> {
    const WHAT: &str = "GET stream";
    let fail = |detail: String| ClientError::protocol(WHAT, detail);
    if url.scheme_str() != Some("http") {
        return Err(fail(format!("only plain http is supported, not {url}")));
    }
    let host = url
        .host()
        .ok_or_else(|| fail("the URL has no host".into()))?;
    let port = url.port_u16().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| fail(format!("connect: {e}")))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| fail(format!("handshake: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let authority = url.authority().map(|a| a.as_str()).unwrap_or(host);
    let mut builder = Request::builder()
        .method(Method::GET)
        .uri(url.path_and_query().map_or("/", |p| p.as_str()))
        .header("host", authority)
        .header("accept", "text/event-stream");
    for (name, value) in headers {
        builder = builder.header(*name, value.as_str());
    }
    let request = builder
        .body(Empty::<Bytes>::new())
        .map_err(|e| fail(format!("request: {e}")))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| fail(format!("send: {e}")))?;
    if !response.status().is_success() {
        eprintln!(
            "conformance-client: the server answered the GET stream with {}",
            response.status()
        );
        return Ok(None);
    }
    let (tx, rx) = mpsc::channel(QUEUE);
    let mut body = response.into_body();
    tokio::spawn(async move {
        let mut decoder = SseDecoder::new(EVENT_LIMIT);
        let mut events = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            if decoder.feed(&chunk, &mut events).is_err() {
                return;
            }
            for event in events.drain(..) {
                if !event.data.trim().is_empty() && tx.send(event.data).await.is_err() {
                    return;
                }
            }
        }
    });
    Ok(Some(rx))
}
