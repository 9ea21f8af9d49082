//! A server that says it is busy (`429 Too Many Requests`, `503 Service Unavailable`)
//! and when to come back (`Retry-After`): a request without side effects is sent again
//! after that wait, a bounded number of times; a `tools/call` never is (it may have run).

use std::time::Duration;

/// Resends of one request at most.
pub const MAX_BUSY_RETRIES: u32 = 2;
/// The longest `Retry-After` waited for; a server asking for more is not waited on.
pub const MAX_BUSY_WAIT: Duration = Duration::from_secs(30);

/// The wait before sending again a request that `idempotent` says has no side effects,
/// refused with `status` and `retry_after`, after `retries` resends; `None` to fail now.
pub fn retry_wait(
    status: u16,
    retry_after: Option<Duration>,
    idempotent: bool,
    retries: u32,
) -> Option<Duration> {
    let wait = retry_after?;
    (idempotent
        && matches!(status, 429 | 503)
        && retries < MAX_BUSY_RETRIES
        && wait <= MAX_BUSY_WAIT)
        .then_some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_requests_told_when_are_sent_again() {
        let soon = Some(Duration::from_secs(1));
        assert_eq!(retry_wait(429, soon, true, 0), soon);
        assert_eq!(retry_wait(503, soon, true, 1), soon);
        assert_eq!(
            retry_wait(503, soon, true, MAX_BUSY_RETRIES),
            None,
            "bounded"
        );
        assert_eq!(
            retry_wait(429, soon, false, 0),
            None,
            "never a request with effects"
        );
        assert_eq!(
            retry_wait(429, None, true, 0),
            None,
            "no Retry-After, no guess"
        );
        assert_eq!(retry_wait(500, soon, true, 0), None);
        assert_eq!(
            retry_wait(429, Some(Duration::from_secs(31)), true, 0),
            None,
            "too long"
        );
    }
}
