//! Reading a managed HTTP server's tools: the same probe, session and `tools/list`
//! exchanges as discovery, with the token the application gave in code (discovery reads
//! it from an environment variable).

use brain_mcp_proto::client::{Era, Framing, listing};
use brain_mcp_proto::mcp::Tool;
use tokio::time::Instant;

use crate::client::{McpClient, Target};
use crate::exchange::{self, StepError};
use crate::{failure, probe};

/// The most `tools/list` pages read.
const MAX_PAGES: usize = 100;
/// The most tools kept.
const MAX_LISTED: usize = 10_000;

/// Every tool the server at `target` lists, and its era, within `deadline`.
pub(crate) async fn list(
    client: &McpClient,
    target: &Target,
    deadline: Instant,
) -> Result<(Era, Vec<Tool>), String> {
    let work = async {
        let era = probe::era_of(client, target, deadline)
            .await
            .map_err(|e| text(target, "server/discover", e))?;
        let tools = match era {
            Era::Stateless(_) => pages(client, target, &Framing::for_era(era)).await?,
            _ => {
                let session = probe::open_session(client, target, client.identity())
                    .await
                    .map_err(|e| text(target, "initialize", e))?;
                pages(client, target, session.framing()).await?
            }
        };
        Ok((era, tools))
    };
    tokio::time::timeout_at(deadline, work)
        .await
        .map_err(|_| "reading the tools took longer than the deadline".to_owned())?
}

async fn pages(
    client: &McpClient,
    target: &Target,
    framing: &Framing,
) -> Result<Vec<Tool>, String> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for page_number in 1..=MAX_PAGES {
        let out = listing::request(framing, client.next_id(), cursor.take(), client.identity());
        let (raw, _) = exchange::request(client, target, framing, out)
            .await
            .map_err(|(e, _)| text(target, &format!("tools/list (page {page_number})"), e))?;
        let page = listing::page(&raw).map_err(|e| format!("tools/list: {e}"))?;
        let room = MAX_LISTED.saturating_sub(tools.len());
        tools.extend(page.tools.into_iter().take(room));
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(tools),
        }
    }
    Err(format!(
        "the server kept paginating tools/list past {MAX_PAGES} pages"
    ))
}

/// A step's failure as a message without the token.
fn text(target: &Target, step: &str, e: StepError) -> String {
    let f = failure::before_call(target, e);
    format!("{step}: {}", f.message)
}
