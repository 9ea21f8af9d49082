//! Reading response bodies under a byte budget.

use std::time::Duration;

use crate::error::{Delivery, ErrorKind, TransportError};
use crate::pool::Reply;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;

/// The bytes an exchange may still receive. Shared by every body of one exchange
/// (the POST reply and any resumed GET streams).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    limit: usize,
    used: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Self {
        Self { limit, used: 0 }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    pub(crate) fn remaining(&self) -> usize {
        self.limit - self.used
    }

    /// A budget that never runs out: for bytes whose messages are bounded one by one.
    pub(crate) fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// Spends `n` bytes, or fails when fewer remain.
    pub(crate) fn take(&mut self, n: usize) -> Result<(), TransportError> {
        match self.used.checked_add(n) {
            Some(total) if total <= self.limit => {
                self.used = total;
                Ok(())
            }
            _ => Err(too_large(self.limit)),
        }
    }
}

pub(crate) fn too_large(limit: usize) -> TransportError {
    TransportError::new(
        ErrorKind::BodyTooLarge { limit },
        Delivery::MaybeSent,
        format!("the server sent more than the {limit}-byte limit of this exchange"),
    )
}

/// The next data chunk of `body`, counted against `budget`; `None` at the end.
/// Trailers are skipped. A failure is an `Io` error with unknown delivery.
pub(crate) async fn next_chunk(
    body: &mut Reply,
    budget: &mut Budget,
) -> Result<Option<Bytes>, TransportError> {
    loop {
        let Some(frame) = body.frame().await else {
            return Ok(None);
        };
        let frame = frame.map_err(|e| {
            TransportError::new(
                ErrorKind::Io,
                Delivery::MaybeSent,
                "the connection failed while reading the reply body",
            )
            .with_source(e)
        })?;
        if let Ok(data) = frame.into_data() {
            budget.take(data.len())?;
            if !data.is_empty() {
                return Ok(Some(data));
            }
        }
    }
}

/// Reads the whole body under `budget`.
pub(crate) async fn read_all(
    body: &mut Reply,
    budget: &mut Budget,
) -> Result<Bytes, TransportError> {
    // A declared length over the budget fails before any byte is read.
    let declared = hyper::body::Body::size_hint(body).lower();
    if usize::try_from(declared).map_or(true, |n| n > budget.remaining()) {
        return Err(too_large(budget.limit()));
    }
    let Some(first) = next_chunk(body, budget).await? else {
        return Ok(Bytes::new());
    };
    let Some(second) = next_chunk(body, budget).await? else {
        return Ok(first);
    };
    let mut buf = BytesMut::with_capacity(first.len() + second.len());
    buf.extend_from_slice(&first);
    buf.extend_from_slice(&second);
    while let Some(chunk) = next_chunk(body, budget).await? {
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// Reads at most `cap` bytes of an error body; `None` if it was longer or failed
/// (the prefix is then not trustworthy JSON anyway).
pub(crate) async fn read_prefix(body: &mut Reply, cap: usize) -> Option<Bytes> {
    let mut budget = Budget::new(cap);
    read_all(body, &mut budget).await.ok()
}

/// Reads the rest of a finished reply so its connection can go back to the pool (the
/// [`Reply`] marks it at the body's end). Gives up (the caller then drops the body,
/// closing the connection) after `max_bytes` or `max_wait`, or on a failure.
pub(crate) async fn drain(body: &mut Reply, max_bytes: usize, max_wait: Duration) {
    if body.ended() {
        // An empty reply (a 202, most DELETE answers): no timer to arm, which would
        // wake the runtime's timer driver for nothing.
        return;
    }
    let mut budget = Budget::new(max_bytes);
    let work = async { while let Ok(Some(_)) = next_chunk(body, &mut budget).await {} };
    let _ = tokio::time::timeout(max_wait, work).await;
}
