//! Requests without side effects over a link (the era probe, `initialize`, `tools/list`
//! pages): the stdio drivers of the core's `era`, `handshake` and `listing` rules.

use brain_mcp_proto::client::era::Verdict;
use brain_mcp_proto::client::handshake::{self, HandshakeError};
use brain_mcp_proto::client::listing::{Exchange, Step};
use brain_mcp_proto::client::stdio::{self, PROBE_PATIENCE, ProbeReply};
use brain_mcp_proto::client::{CallError, Expect, Framing, Identity, Outgoing, era};
use brain_mcp_proto::jsonrpc::RequestId;
use serde_json::value::RawValue;

use super::link::{Link, LinkError};

/// Why a request over a link failed.
#[derive(Debug)]
pub(crate) enum ExchangeError {
    /// The link failed (the child ended, a line too long).
    Link(LinkError),
    /// The core's verdict on the answer.
    Core(CallError),
}

/// Sends `out` and reads its answer; server requests on the way are answered by the core
/// as for a client that gives no input.
pub(crate) async fn request(
    link: &Link,
    framing: &Framing,
    out: Outgoing,
) -> Result<Box<RawValue>, ExchangeError> {
    let Expect::Response(id) = out.expect.clone() else {
        return Err(ExchangeError::Core(CallError::Protocol(
            "a request without an id cannot be answered".into(),
        )));
    };
    let exchange = Exchange::new(framing.clone());
    let mut inbox = link.open(id, None);
    link.send(&out).await.map_err(ExchangeError::Link)?;
    loop {
        let inbound = inbox.next().await.map_err(ExchangeError::Link)?;
        if inbound.is_final_response {
            return exchange
                .handle_response(&inbound.text)
                .map_err(ExchangeError::Core);
        }
        match exchange.handle_message(&inbound.text) {
            Step::Send(answer) => {
                let _ = link.send(&answer).await;
            }
            Step::Done(Err(e)) => return Err(ExchangeError::Core(e)),
            _ => {}
        }
    }
}

/// Probes a fresh child's era with `server/discover`: the core reads the answer, and
/// reads silence and a child that quits as the handshake era.
pub(crate) async fn probe(link: &Link, id: RequestId, identity: &Identity) -> Verdict {
    let out = era::probe(id.clone(), identity);
    let mut inbox = link.open(id, None);
    if link.send(&out).await.is_err() {
        return stdio::verdict(ProbeReply::Ended);
    }
    let answer = async {
        loop {
            match inbox.next().await {
                Ok(inbound) if inbound.is_final_response => return Some(inbound.text),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    };
    match tokio::time::timeout(PROBE_PATIENCE, answer).await {
        Ok(Some(text)) => stdio::verdict(ProbeReply::Message(&text)),
        Ok(None) => stdio::verdict(ProbeReply::Ended),
        Err(_) => stdio::verdict(ProbeReply::Silent),
    }
}

/// Why a session could not be opened over a link.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The link failed.
    Link(LinkError),
    /// The server refused or broke the handshake.
    Handshake(String),
}

/// Opens the handshake-era session a fresh child is: `initialize`, then
/// `notifications/initialized`. The returned framing has no session id (the process is
/// the session).
pub(crate) async fn open(
    link: &Link,
    id: RequestId,
    identity: &Identity,
) -> Result<Framing, OpenError> {
    let before = Framing::before_session();
    let out = handshake::initialize(id, identity);
    let raw = match request(link, &before, out).await {
        Ok(raw) => raw,
        Err(ExchangeError::Link(e)) => return Err(OpenError::Link(e)),
        Err(ExchangeError::Core(CallError::Rpc { error, .. })) => {
            return Err(OpenError::Handshake(
                HandshakeError::Refused(error).to_string(),
            ));
        }
        Err(ExchangeError::Core(e)) => return Err(OpenError::Handshake(e.to_string())),
    };
    let framing =
        handshake::negotiated(&raw, None).map_err(|e| OpenError::Handshake(e.to_string()))?;
    link.send(&handshake::initialized(&framing))
        .await
        .map_err(OpenError::Link)?;
    Ok(framing)
}
