//! A recording HTTP/1.1 proxy in front of a peer: it notes every JSON-RPC method that
//! passes (so the report shows which era was really spoken), and can hide the 2026-era
//! probe so that a dual-era server is driven through the handshake without any client flag.
//!
//! Each forwarded request gets its own upstream connection with `Connection: close`, and
//! the reply (JSON or a live SSE stream) is copied back as it arrives.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// Longest request body accepted (tool calls here are tiny).
const MAX_BODY: usize = 1 << 20;
/// Bound on every socket read and write, so no thread waits for ever.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// What passed through: the JSON-RPC method (empty for bodies without one) and the
/// request's `MCP-Protocol-Version` header.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) protocol_version: Option<String>,
}

/// A running proxy; its threads end with the process.
pub(crate) struct Proxy {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Proxy {
    /// Starts a proxy to `upstream`. With `hide_probe`, `server/discover` is answered with
    /// "method not found" as a handshake-only server would, and never forwarded.
    pub(crate) fn start(upstream: SocketAddr, hide_probe: bool) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                thread::spawn(move || {
                    let _ = serve(stream, upstream, hide_probe, &log);
                });
            }
        });
        Ok(Self { addr, seen })
    }

    /// The proxied MCP endpoint.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Everything seen so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One request read from the client.
struct Request {
    /// The request line and headers, without the final blank line.
    head: Vec<String>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.iter().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

fn serve(
    client: TcpStream,
    upstream: SocketAddr,
    hide_probe: bool,
    log: &Mutex<Vec<Seen>>,
) -> io::Result<()> {
    client.set_read_timeout(Some(IO_TIMEOUT))?;
    client.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut writer = client.try_clone()?;
    let mut reader = BufReader::new(client);
    while let Some(request) = read_request(&mut reader)? {
        let method = serde_json::from_slice::<serde_json::Value>(&request.body)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned))
            .unwrap_or_default();
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                method: method.clone(),
                protocol_version: request.header("mcp-protocol-version").map(str::to_owned),
            });
        if hide_probe && method == "server/discover" {
            let id = serde_json::from_slice::<serde_json::Value>(&request.body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(serde_json::Value::Null);
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": "Method not found"},
            })
            .to_string();
            write!(
                writer,
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )?;
            writer.flush()?;
            continue;
        }
        forward(&request, upstream, &mut writer)?;
        // The reply was copied up to the upstream's close; end this connection too.
        return Ok(());
    }
    Ok(())
}

/// Reads a request head and its `Content-Length` body; `None` when the client closed.
fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            if head.is_empty() {
                continue;
            }
            break;
        }
        head.push(line);
    }
    let mut request = Request {
        head,
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        return Err(io::Error::other("chunked request bodies are not proxied"));
    }
    let length: usize = request
        .header("content-length")
        .map(|v| {
            v.parse()
                .map_err(|_| io::Error::other("bad content-length"))
        })
        .transpose()?
        .unwrap_or(0);
    if length > MAX_BODY {
        return Err(io::Error::other("request body too large"));
    }
    request.body = vec![0; length];
    reader.read_exact(&mut request.body)?;
    Ok(Some(request))
}

/// Sends `request` upstream with `Connection: close` and copies the reply back, with its
/// own connection header replaced by `close`.
fn forward(request: &Request, upstream: SocketAddr, client: &mut TcpStream) -> io::Result<()> {
    let mut up = TcpStream::connect_timeout(&upstream, Duration::from_secs(10))?;
    up.set_read_timeout(Some(IO_TIMEOUT))?;
    up.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut out = String::new();
    for (i, line) in request.head.iter().enumerate() {
        let name = line
            .split_once(':')
            .map(|(n, _)| n.trim().to_ascii_lowercase());
        match name.as_deref() {
            _ if i == 0 => out.push_str(line),
            Some("host") => out.push_str(&format!("host: {upstream}")),
            Some("connection" | "keep-alive") => continue,
            _ => out.push_str(line),
        }
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    up.write_all(out.as_bytes())?;
    up.write_all(&request.body)?;
    up.flush()?;
    let mut reply = BufReader::new(up);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reply.read_line(&mut line)? == 0 {
            return Err(io::Error::other("upstream closed before its reply head"));
        }
        if line.trim_end().is_empty() {
            break;
        }
        let is_connection = line
            .split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("connection"));
        if !is_connection {
            head.push_str(&line);
        }
    }
    head.push_str("connection: close\r\n\r\n");
    client.write_all(head.as_bytes())?;
    client.flush()?;
    copy_streaming(&mut reply, client)
}

/// Copies until the upstream closes, flushing each piece at once (SSE must not wait).
fn copy_streaming(from: &mut impl Read, to: &mut TcpStream) -> io::Result<()> {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
}
