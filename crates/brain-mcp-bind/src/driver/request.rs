//! A request without side effects (`initialize`, a page of `tools/list`) over a link: the
//! core's `listing::Exchange` reads each message of the reply, answers server requests on
//! the way, and says what the answer means, from a 2xx body or an error status alike; a
//! busy server's `Retry-After` is honoured as the core's `busy` rule says (the call's
//! deadline bounds the wait: the call is dropped when it passes).

use brain_mcp_proto::client::listing::{Exchange, Step as Read};
use brain_mcp_proto::client::{CallError, Expect, Framing, Outgoing, Violation, busy};
use serde_json::value::RawValue;

use super::error::{Cause, DriverError, Step};
use crate::link::{Link, LinkError};
use crate::observe::Operation;
use tracing::Instrument;

/// Bytes a discovery or handshake exchange may read (the tool list can be large).
pub(crate) const CONTROL_BUDGET: usize = 8 * 1024 * 1024;

/// Sends `out` in `framing` as `step`, and returns the result and the session id the reply
/// carried; one MCP operation for telemetry, however many times it is sent.
pub(crate) async fn request(
    link: &Link,
    framing: &Framing,
    out: Outgoing,
    step: Step,
) -> Result<(Box<RawValue>, Option<String>), DriverError> {
    request_reading(link, framing, out, step, CONTROL_BUDGET).await
}

/// [`request`] whose response may take `budget` bytes (a task's status or result: the
/// call's own read budget).
pub(crate) async fn request_reading(
    link: &Link,
    framing: &Framing,
    out: Outgoing,
    step: Step,
    budget: usize,
) -> Result<(Box<RawValue>, Option<String>), DriverError> {
    let op = Operation::start(link.peer(), framing, &out, None, || link.secrets());
    let result = exchange(link, framing, out, step, budget)
        .instrument(op.span())
        .await;
    op.end(result.as_ref().err().map(DriverError::failure), || {
        link.secrets()
    });
    result
}

async fn exchange(
    link: &Link,
    framing: &Framing,
    out: Outgoing,
    step: Step,
    budget: usize,
) -> Result<(Box<RawValue>, Option<String>), DriverError> {
    let Expect::Response(id) = out.expect.clone() else {
        let error = CallError::Protocol(Violation::RequestWithoutId);
        return Err(DriverError::new(step, Cause::Core(error)));
    };
    let exchange = Exchange::new(framing.clone());
    let failed = |e: LinkError| {
        DriverError::from_link(step, e, |status, rpc, challenge| {
            exchange.handle_status(status, rpc, challenge)
        })
    };
    let mut resends = 0;
    let mut replies = loop {
        let idempotent = out.idempotent;
        match link.request(out.clone(), budget).await {
            Ok(replies) => break replies,
            Err(e) => {
                // A busy server's Retry-After, for a request safe to send again.
                let wait = e.transport().and_then(|t| {
                    let status = t.status()?.as_u16();
                    busy::retry_wait(status, t.retry_after(), idempotent, resends)
                });
                let Some(wait) = wait else {
                    return Err(failed(e));
                };
                resends += 1;
                tokio::time::sleep(wait).await;
            }
        }
    };
    let session = replies.session_id().map(str::to_owned);
    loop {
        let Some(received) = replies.next().await else {
            return Err(DriverError::new(step, Cause::Core(ended())));
        };
        let received = received.map_err(|e| failed(e.into()))?;
        match exchange.handle(&id, received.message) {
            Read::Done(Ok(result)) => return Ok((result, session)),
            Read::Done(Err(e)) => return Err(DriverError::new(step, Cause::Core(e))),
            Read::Send(answer) => link.notify(answer).await,
            _ => {}
        }
    }
}

/// The core's verdict on a reply that ended before its response.
pub(crate) fn ended() -> CallError {
    CallError::Protocol(Violation::ReplyEnded)
}
