//! What a call refused by an HTTP server's circuit breaker says. The breaker is the
//! core's server health ([`brain_mcp_proto::client::ServerState`], its numbers
//! [`Policy::BREAKER`]), kept in [`crate::servers`]: after calls in a row could not reach
//! a server (no connection, TLS failure, no answer to the era probe), calls to it fail at
//! once for a cooldown instead of each paying a connect timeout; then one trial call
//! goes, and its outcome closes the breaker or opens it again for twice as long. Any
//! answer from the server, even an error, counts as reached.

use std::time::{SystemTime, UNIX_EPOCH};

use brain_mcp_proto::client::health::Policy;

/// Why a call fails at once: its server's breaker is open. `Display` says since when the
/// server has been unreachable and when a call may go again; nothing was sent.
#[derive(Debug)]
pub(crate) struct BreakerOpen {
    /// What messages call the server.
    pub(crate) origin: String,
    /// When it turned unreachable.
    pub(crate) since: SystemTime,
    /// The wait until the next trial; none while a trial is under way.
    pub(crate) next: Option<std::time::Duration>,
}

impl std::fmt::Display for BreakerOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let next = match self.next {
            Some(wait) => format!("the next trial in {} s", wait.as_secs_f64().ceil()),
            None => "a trial call is under way".to_owned(),
        };
        write!(
            f,
            "{} has been unreachable since {} ({} or more calls in a row could not reach \
             it); calls fail at once until one trial call gets through ({next}); nothing \
             was sent",
            self.origin,
            rfc3339(self.since),
            Policy::BREAKER.trip_after
        )
    }
}

/// `since` as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(since: SystemTime) -> String {
    let secs = since.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(1_764_892_800 + 3_661)),
            "2025-12-05T01:01:01Z"
        );
    }
}
