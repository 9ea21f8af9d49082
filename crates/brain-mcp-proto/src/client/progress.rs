//! Progress notifications for a call: which are ours, and their numbers as the server
//! wrote them.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::RequestId;

/// One progress notification for the call, numbers exactly as the server wrote them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Progress {
    /// Work done so far: a JSON number as the server wrote it.
    pub progress: Box<RawValue>,
    /// Total work, when known: a JSON number as the server wrote it.
    pub total: Option<Box<RawValue>>,
    /// The server's note, as sent (bound it before showing it).
    pub message: Option<String>,
}

/// The longest progress number passed on: digits enough for any real count, and a
/// server cannot make each notification carry megabytes to the host.
const MAX_PROGRESS_NUMBER: usize = 64;

/// Whether `raw` (valid JSON) is a number of at most [`MAX_PROGRESS_NUMBER`] bytes: the
/// only values that start with a digit or `-`.
fn is_number(raw: &RawValue) -> bool {
    raw.get().len() <= MAX_PROGRESS_NUMBER
        && raw
            .get()
            .bytes()
            .next()
            .is_some_and(|b| b == b'-' || b.is_ascii_digit())
}

/// The progress of `params` when it is for `token` and its numbers are numbers.
pub(super) fn read(params: &RawValue, token: &RequestId) -> Option<Progress> {
    let p: ProgressWire = serde_json::from_str(params.get()).ok()?;
    let numbers = is_number(&p.progress) && p.total.as_deref().is_none_or(is_number);
    (numbers && &p.progress_token == token).then_some(Progress {
        progress: p.progress,
        total: p.total,
        message: p.message,
    })
}

/// The members of a progress notification this client reads.
#[derive(Deserialize)]
struct ProgressWire {
    #[serde(rename = "progressToken")]
    progress_token: RequestId,
    progress: Box<RawValue>,
    #[serde(default)]
    total: Option<Box<RawValue>>,
    #[serde(default)]
    message: Option<String>,
}
