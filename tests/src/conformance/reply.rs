//! Reading the reply to one request, and answering the server's requests on the way.

use brain_mcp_proto::jsonrpc::{self, ErrorCode, Incoming, Message, RequestId};
use brain_mcp_transport::{
    ErrorKind, Expect, PostReply, PostRequest, ResumePolicy, TransportError,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::ClientError;
use super::session::{BUDGET, REQUEST_DEADLINE, Session};

impl Session {
    pub(super) async fn read_reply(
        &mut self,
        method: &str,
        req: PostRequest,
    ) -> Result<(Value, Option<String>), ClientError> {
        let id = match &req.expect {
            Expect::Response(id) => id.clone(),
            Expect::Accepted => return Err(ClientError::protocol(method, "not a request")),
        };
        let reply = self
            .http
            .post(req)
            .await
            .map_err(|e| transport_error(method, e))?;
        let PostReply::Stream(mut stream) = reply else {
            return Err(ClientError::protocol(
                method,
                "the request was answered with 202",
            ));
        };
        let session_id = stream.session_id().map(str::to_owned);
        loop {
            // Server requests may come on the reply stream or on the GET stream.
            let (text, on_reply) = tokio::select! {
                item = stream.next() => match item {
                    Some(item) => (item.map_err(|e| transport_error(method, e))?.text, true),
                    None => break,
                },
                text = next_listened(&mut self.listener) => match text {
                    Some(text) => (text, false),
                    None => {
                        self.listener = None;
                        continue;
                    }
                },
            };
            let decoded = jsonrpc::decode(text.as_bytes())
                .map_err(|e| ClientError::protocol(method, format!("undecodable message: {e}")))?;
            let Incoming::Single(message) = decoded else {
                return Err(ClientError::protocol(
                    method,
                    "a batch arrived on the stream",
                ));
            };
            let ours = on_reply || message.id() == Some(&id);
            match message {
                Message::Response(r) if ours => {
                    let result = serde_json::from_str(r.result.get())
                        .map_err(|e| ClientError::protocol(method, e.to_string()))?;
                    return Ok((result, session_id));
                }
                Message::Error(e) if ours => {
                    return Err(ClientError::Rpc {
                        method: method.to_owned(),
                        code: e.error.code.0,
                        message: e.error.message.into_owned(),
                    });
                }
                Message::Request(r) => {
                    let params: Value = match r.params {
                        Some(p) => serde_json::from_str(p.get()).unwrap_or(Value::Null),
                        None => Value::Null,
                    };
                    self.answer_server_request(method, &r.id, &r.method, &params)
                        .await?;
                }
                Message::Notification(n) => {
                    eprintln!("conformance-client: {method}: notification {}", n.method);
                }
                Message::Response(_) | Message::Error(_) => {
                    eprintln!(
                        "conformance-client: {method}: ignoring a response for another request"
                    );
                }
            }
        }
        Err(ClientError::protocol(
            method,
            "the reply ended without a response",
        ))
    }

    /// Answers a JSON-RPC request the server sent on a reply stream.
    async fn answer_server_request(
        &self,
        during: &str,
        id: &RequestId,
        method: &str,
        params: &Value,
    ) -> Result<(), ClientError> {
        if self.is_stateless() {
            // 2026-era servers ask for input only through input_required results.
            return Err(ClientError::protocol(
                during,
                format!("the server sent a {method} request on a 2026-era stream"),
            ));
        }
        eprintln!("conformance-client: {during}: answering the server's {method}");
        let body = match self.responder.answer(method, params) {
            Ok(result) => jsonrpc::encode_response(id, &result)
                .map_err(|e| ClientError::protocol(method, e.to_string()))?,
            Err(refusal) => {
                jsonrpc::encode_error(Some(id), ErrorCode(refusal.code), &refusal.message, None)
            }
        };
        self.post_accepted(method, body).await
    }

    pub(super) async fn post_accepted(
        &self,
        method: &str,
        body: Vec<u8>,
    ) -> Result<(), ClientError> {
        let req = PostRequest {
            url: self.url.clone(),
            body: body.into(),
            expect: Expect::Accepted,
            headers: self.headers(false),
            budget: BUDGET,
            resume: ResumePolicy::Never,
            idempotent: false,
        };
        match tokio::time::timeout(REQUEST_DEADLINE, self.http.post(req)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(transport_error(method, e)),
            Err(_) => Err(ClientError::Timeout {
                method: method.to_owned(),
                seconds: REQUEST_DEADLINE.as_secs(),
            }),
        }
    }
}

/// Maps a transport error, lifting a JSON-RPC error found in an error status.
pub(super) fn transport_error(method: &str, e: TransportError) -> ClientError {
    if let ErrorKind::Status {
        rpc: Some((code, message)),
        ..
    } = e.kind()
    {
        return ClientError::Rpc {
            method: method.to_owned(),
            code: code.0,
            message: message.clone(),
        };
    }
    ClientError::Transport {
        method: method.to_owned(),
        source: Box::new(e),
    }
}

/// The next message of the GET stream; never resolves when there is none.
async fn next_listened(listener: &mut Option<mpsc::Receiver<String>>) -> Option<String> {
    match listener {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
