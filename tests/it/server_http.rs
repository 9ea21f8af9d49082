//! A tiny HTTP/1.1 client over `std::net::TcpStream`, just enough to drive the test server
//! by hand (kept independent of brain-mcp-transport on purpose).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A fully read response.
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Resp {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The body as JSON (the one message of a JSON reply, or the last SSE message).
    pub(crate) fn json(&self) -> Value {
        if self.is_sse() {
            return self.sse().pop().expect("an SSE message");
        }
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub(crate) fn is_sse(&self) -> bool {
        self.header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
    }

    /// The JSON messages of an SSE body, in order.
    pub(crate) fn sse(&self) -> Vec<Value> {
        let mut stream = SseReader::new(&self.body[..]);
        std::iter::from_fn(|| stream.next_message()).collect()
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn write_request(
    stream: &mut TcpStream,
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> io::Result<()> {
    let mut req = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.unwrap_or_default();
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(req.as_bytes())
}

fn read_head(r: &mut impl BufRead) -> io::Result<(u16, Vec<(String, String)>)> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("status line {line:?}"))
        })?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            return Ok((status, headers));
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
}

/// A response body reader honouring Content-Length or chunked framing.
pub(crate) struct Body<R> {
    r: R,
    chunked: bool,
    left: u64,
    done: bool,
}

impl<R: BufRead> Body<R> {
    fn new(r: R, headers: &[(String, String)]) -> Self {
        let chunked = header(headers, "transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let len = header(headers, "content-length").and_then(|v| v.parse().ok());
        Self {
            r,
            chunked,
            left: len.unwrap_or(if chunked { 0 } else { u64::MAX }),
            done: len == Some(0),
        }
    }
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.chunked && self.left == 0 {
            let mut line = String::new();
            if self.r.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let size = u64::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "chunk size"))?;
            if size == 0 {
                self.done = true;
                let mut crlf = String::new();
                self.r.read_line(&mut crlf)?;
                return Ok(0);
            }
            self.left = size;
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.r.read(&mut buf[..want])?;
        if n == 0 {
            if self.left == u64::MAX {
                self.done = true;
                return Ok(0);
            }
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if self.left != u64::MAX {
            self.left -= n as u64;
        }
        if self.chunked && self.left == 0 {
            let mut crlf = [0u8; 2];
            self.r.read_exact(&mut crlf)?;
        } else if !self.chunked && self.left == 0 {
            self.done = true;
        }
        Ok(n)
    }
}

/// Reads SSE messages (JSON data of each event; comments and empty data skipped).
pub(crate) struct SseReader<R> {
    r: BufReader<R>,
}

impl<R: Read> SseReader<R> {
    pub(crate) fn new(r: R) -> Self {
        Self {
            r: BufReader::new(r),
        }
    }

    /// The next JSON message, or `None` at the end of the stream.
    pub(crate) fn next_message(&mut self) -> Option<Value> {
        let mut data = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            if self.r.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let l = line.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                if !data.is_empty() {
                    return serde_json::from_str(&data).ok();
                }
                continue;
            }
            if let Some(d) = l.strip_prefix("data:") {
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
    }

    /// The next raw line, comments included.
    pub(crate) fn next_line(&mut self) -> Option<String> {
        let mut line = String::new();
        (self.r.read_line(&mut line).ok()? > 0).then_some(line)
    }
}

/// A kept-alive connection to the server.
pub(crate) struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub(crate) fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).expect("connect to the test server");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set a read timeout");
        Self {
            addr,
            reader: BufReader::new(stream),
        }
    }

    /// Sends a request and reads the whole response.
    pub(crate) fn call(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Resp {
        self.try_call(method, headers, body)
            .expect("an HTTP exchange")
    }

    pub(crate) fn try_call(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> io::Result<Resp> {
        write_request(self.reader.get_mut(), self.addr, method, headers, body)?;
        let (status, headers) = read_head(&mut self.reader)?;
        let mut body = Vec::new();
        Body::new(&mut self.reader, &headers).read_to_end(&mut body)?;
        Ok(Resp {
            status,
            headers,
            body,
        })
    }

    /// Sends a request and returns the head and a reader for the still-open body.
    pub(crate) fn stream(
        mut self,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<(String, String)>, Body<BufReader<TcpStream>>) {
        write_request(
            self.reader.get_mut(),
            self.addr,
            "POST",
            headers,
            Some(body),
        )
        .expect("write the request");
        let (status, headers) = read_head(&mut self.reader).expect("a response head");
        let body = Body::new(self.reader, &headers);
        (status, headers, body)
    }

    /// Changes the read timeout.
    pub(crate) fn set_timeout(&mut self, wait: Duration) {
        let _ = self.reader.get_ref().set_read_timeout(Some(wait));
    }

    /// Whether the server has closed the connection (reads EOF within `wait`).
    pub(crate) fn closed_within(&mut self, wait: Duration) -> bool {
        let _ = self.reader.get_ref().set_read_timeout(Some(wait));
        let mut byte = [0u8; 1];
        matches!(self.reader.read(&mut byte), Ok(0))
    }
}

/// `Accept` as MCP clients must send it.
pub(crate) const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
/// `Content-Type: application/json`.
pub(crate) const JSON: (&str, &str) = ("Content-Type", "application/json");
/// The 2026 protocol version.
pub(crate) const MODERN: &str = "2026-07-28";

/// A JSON-RPC request body.
pub(crate) fn rpc(id: u64, method: &str, params: Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2026-era request body: `params` plus the required `_meta` keys.
pub(crate) fn modern_rpc(id: u64, method: &str, mut params: Value) -> String {
    let meta = params
        .as_object_mut()
        .expect("params object")
        .entry("_meta")
        .or_insert_with(|| serde_json::json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = MODERN.into();
    meta["io.modelcontextprotocol/clientCapabilities"] = serde_json::json!({});
    rpc(id, method, params)
}

/// Sends a well-formed 2026-era request on `conn`.
pub(crate) fn modern_call(
    conn: &mut Conn,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> Resp {
    let mut headers = vec![
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    conn.call("POST", &headers, Some(&modern_rpc(id, method, params)))
}

/// A handshake-era session opened over one kept-alive connection.
pub(crate) struct Session {
    pub(crate) conn: Conn,
    pub(crate) id: String,
    pub(crate) version: String,
}

impl Session {
    /// `initialize` (offering 2025-11-25) then `notifications/initialized`.
    pub(crate) fn open(addr: SocketAddr) -> Self {
        let mut conn = Conn::open(addr);
        let init = rpc(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        let resp = conn.call("POST", &[ACCEPT, JSON], Some(&init));
        assert_eq!(resp.status, 200, "initialize: {resp:?}");
        let id = resp
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let version = resp.json()["result"]["protocolVersion"]
            .as_str()
            .expect("a negotiated version")
            .to_owned();
        let mut session = Self { conn, id, version };
        let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = session.post(&note.to_string());
        assert_eq!(resp.status, 202, "initialized: {resp:?}");
        session
    }

    /// The headers every in-session request carries.
    pub(crate) fn headers(&self) -> Vec<(&str, &str)> {
        vec![
            ACCEPT,
            JSON,
            ("Mcp-Session-Id", self.id.as_str()),
            ("MCP-Protocol-Version", self.version.as_str()),
        ]
    }

    /// POSTs `body` within the session.
    pub(crate) fn post(&mut self, body: &str) -> Resp {
        let headers: Vec<(String, String)> = self
            .headers()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.conn.call("POST", &headers, Some(body))
    }
}
