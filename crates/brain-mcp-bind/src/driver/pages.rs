//! Every page of `tools/list` over a channel, whatever carries it.

use brain_mcp_proto::client::{CallError, Identity, Violation, listing};
use brain_mcp_proto::mcp::Tool;

use super::error::{Cause, DriverError, Step};
use super::request::request;
use super::session::Channel;
use crate::client::McpClient;

/// The most `tools/list` pages read before giving up on a server that keeps paginating.
pub(crate) const MAX_PAGES: usize = 100;

/// Reads every page of the tool list on `channel` as `identity`, handing each page's tools
/// to `page` (which keeps what it needs, within its own bounds); at most [`MAX_PAGES`]. A
/// 2026 request refused as stale (-32022, -32020) fails with the error whose
/// [`DriverError::outcome`] says so, for the server's state.
pub(crate) async fn list_tools(
    client: &McpClient,
    channel: &Channel,
    identity: &Identity,
    mut page: impl FnMut(Vec<Tool>),
) -> Result<(), DriverError> {
    let mut cursor = None;
    for number in 1..=MAX_PAGES {
        let out = listing::request(&channel.framing, client.next_id(), cursor.take(), identity);
        let step = Step::List(number);
        let (result, _) = request(&channel.link, &channel.framing, out, step).await?;
        let listed = listing::page(&result).map_err(|e| DriverError::new(step, Cause::Core(e)))?;
        page(listed.tools);
        match listed.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(()),
        }
    }
    let error = CallError::Protocol(Violation::TooManyPages(MAX_PAGES));
    Err(DriverError::new(Step::List(MAX_PAGES), Cause::Core(error)))
}
