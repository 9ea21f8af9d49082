//! The requests of one call as our client sent them, recorded as raw HTTP/1.1 bytes (see
//! `capture`) and split back into requests for the raw side to replay.

use bytes::Bytes;
use http::Method;
use http::header::{CONTENT_LENGTH, HeaderName, HeaderValue, TRANSFER_ENCODING};

/// One HTTP request as it left our client.
#[derive(Clone, Debug)]
pub(crate) struct Captured {
    /// `POST` or `DELETE`.
    pub(crate) method: Method,
    /// Every header in order, as sent.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, byte for byte.
    pub(crate) body: Bytes,
}

impl Captured {
    /// The JSON-RPC `method` of the body, or the HTTP method for a bodiless request.
    pub(crate) fn role(&self) -> String {
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned))
            .unwrap_or_else(|| self.method.to_string())
    }
}

/// Splits recorded client bytes into requests; a trailing partial request is ignored.
pub(crate) fn parse(mut bytes: &[u8]) -> Result<Vec<Captured>, String> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = std::str::from_utf8(&bytes[..end]).map_err(|e| e.to_string())?;
        let mut lines = head.split("\r\n");
        let method = lines.next().unwrap_or_default().split(' ').next();
        let method =
            Method::from_bytes(method.unwrap_or_default().as_bytes()).map_err(|e| e.to_string())?;
        let mut headers = Vec::new();
        let mut length = 0usize;
        for line in lines {
            let (name, value) = line.split_once(':').ok_or("a header line without ':'")?;
            let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| e.to_string())?;
            let value = HeaderValue::from_str(value.trim()).map_err(|e| e.to_string())?;
            if name == TRANSFER_ENCODING {
                return Err("our client sent a chunked body; only Content-Length is read".into());
            }
            if name == CONTENT_LENGTH {
                length = value
                    .to_str()
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
            }
            headers.push((name, value));
        }
        let body_start = end + 4;
        if bytes.len() < body_start + length {
            break;
        }
        let body = Bytes::copy_from_slice(&bytes[body_start..body_start + length]);
        out.push(Captured {
            method,
            headers,
            body,
        });
        bytes = &bytes[body_start + length..];
    }
    Ok(out)
}

/// The exchanges of one call, in order: four in the handshake era (`initialize`,
/// `notifications/initialized`, `tools/call`, `DELETE`), one `tools/call` otherwise.
pub(crate) fn steps(requests: &[Captured], handshake: bool) -> Result<Vec<Captured>, String> {
    let roles: &[&str] = if handshake {
        &[
            "initialize",
            "notifications/initialized",
            "tools/call",
            "DELETE",
        ]
    } else {
        &["tools/call"]
    };
    roles
        .iter()
        .map(|role| {
            requests
                .iter()
                .rev()
                .find(|r| r.role() == *role)
                .cloned()
                .ok_or_else(|| format!("the recording holds no {role} request"))
        })
        .collect()
}
