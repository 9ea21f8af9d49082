//! Entry points for `brain-bench tenants` (`bench/`): tenants' authorizers made as calls
//! make them, without a server. Not a stable API.
#![doc(hidden)]

use brain_mcp_proto::auth::HttpUrl;

use crate::target::Target;
use crate::{McpClient, OAuthClient};

/// Makes (or finds) the authorizer that a call with `oauth` to the server at `url` uses,
/// as the executor does, and leaves it as a first call with client credentials does: the
/// server's authority learned from `documents` (its protected resource metadata, then
/// its authorization server's metadata) and the token granted in `token_response` (a
/// token endpoint's JSON body) kept.
pub fn hold_token(
    client: &McpClient,
    url: &str,
    oauth: &OAuthClient,
    documents: [&[u8]; 2],
    token_response: &[u8],
) -> Result<(), String> {
    let target = Target::new(url, None)
        .map_err(|e| e.to_string())?
        .with_oauth(client.authorizers(), oauth);
    let server = HttpUrl::parse(url).map_err(|e| e.to_string())?;
    let authorizer = target.auth.ok_or("no authorizer")?;
    authorizer.learn_and_keep(&server, documents, token_response)
}

/// Finds the authorizer that a call with `oauth` to the server at `url` uses, as the
/// executor does (made if none is kept; now the most recently used).
pub fn touch(client: &McpClient, url: &str, oauth: &OAuthClient) -> Result<(), String> {
    let target = Target::new(url, None)
        .map_err(|e| e.to_string())?
        .with_oauth(client.authorizers(), oauth);
    target.auth.map(drop).ok_or_else(|| "no authorizer".into())
}
