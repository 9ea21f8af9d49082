//! Recording the exact HTTP requests our client sends, so the raw floor can replay them.
//!
//! A small TCP proxy sits between our client and the test server and keeps every byte the
//! client writes. The bytes are then split into HTTP/1.1 requests (request line, headers,
//! `Content-Length` body): our client only ever sends bodies of known length.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Method;
use http::header::{HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One HTTP request as it left our client.
#[derive(Clone, Debug)]
pub struct Captured {
    /// `POST` or `DELETE`.
    pub method: Method,
    /// Every header in order, as sent (`Host` included; the replay drops it).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, byte for byte.
    pub body: Bytes,
}

impl Captured {
    /// The JSON-RPC `method` of the body, or the HTTP method for a bodiless request.
    pub fn role(&self) -> String {
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned))
            .unwrap_or_else(|| self.method.to_string())
    }
}

/// The bytes one client connection wrote.
type Log = Arc<Mutex<Vec<u8>>>;

/// A proxy to `upstream` that records what clients send; stops when dropped.
pub struct Recorder {
    addr: SocketAddr,
    streams: Arc<Mutex<Vec<Log>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    /// Starts the proxy on 127.0.0.1 (inside a Tokio runtime).
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let streams: Arc<Mutex<Vec<Log>>> = Arc::default();
        let all = streams.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let log = Arc::new(Mutex::new(Vec::new()));
                all.lock().expect("recorder lock").push(log.clone());
                tokio::spawn(pipe(client, upstream, log));
            }
        });
        Self {
            addr,
            streams,
            task,
        }
    }

    /// The endpoint to give the client instead of the server's.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Forgets everything recorded so far.
    pub fn clear(&self) {
        for log in self.streams.lock().expect("recorder lock").iter() {
            log.lock().expect("recorder lock").clear();
        }
    }

    /// Every complete request recorded since the last [`Recorder::clear`].
    pub fn requests(&self) -> Vec<Captured> {
        let mut out = Vec::new();
        for log in self.streams.lock().expect("recorder lock").iter() {
            out.extend(parse_requests(&log.lock().expect("recorder lock")));
        }
        out
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn pipe(client: TcpStream, upstream: SocketAddr, log: Log) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = server.set_nodelay(true);
    let _ = client.set_nodelay(true);
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let down = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_rd, &mut client_wr).await;
        let _ = client_wr.shutdown().await;
    });
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match client_rd.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                log.lock()
                    .expect("recorder lock")
                    .extend_from_slice(&buf[..n]);
                if server_wr.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = server_wr.shutdown().await;
    let _ = down.await;
}

/// Splits recorded client bytes into requests; a trailing partial request is ignored.
fn parse_requests(mut bytes: &[u8]) -> Vec<Captured> {
    let mut out = Vec::new();
    while let Some(end) = find(bytes, b"\r\n\r\n") {
        let head = std::str::from_utf8(&bytes[..end]).expect("request head is text");
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let method = request_line.split(' ').next().unwrap_or_default();
        let method = Method::from_bytes(method.as_bytes()).expect("request method");
        let mut headers = Vec::new();
        let mut length = 0usize;
        for line in lines {
            let (name, value) = line.split_once(':').expect("header line");
            let name = HeaderName::from_bytes(name.trim().as_bytes()).expect("header name");
            let value = HeaderValue::from_str(value.trim()).expect("header value");
            if name == http::header::CONTENT_LENGTH {
                length = value
                    .to_str()
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
            }
            assert!(
                name != http::header::TRANSFER_ENCODING,
                "our client sent a chunked body; the recorder only reads Content-Length"
            );
            headers.push((name, value));
        }
        let body_start = end + 4;
        if bytes.len() < body_start + length {
            break;
        }
        out.push(Captured {
            method,
            headers,
            body: Bytes::copy_from_slice(&bytes[body_start..body_start + length]),
        });
        bytes = &bytes[body_start + length..];
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
