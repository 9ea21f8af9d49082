//! Entry points for `brain-bench tenants` (`bench/`): tenants' authorizers made as calls
//! make them, without a server. Not a stable API.
#![doc(hidden)]

use crate::target::Target;
use crate::{McpClient, OAuthClient};

/// Makes (or finds) the authorizer that a call with `oauth` to the server at `url` uses,
/// as the executor does, and has it keep the token that `issuer` granted in
/// `token_response` (a token endpoint's JSON body), as a client credentials grant does.
pub fn hold_token(
    client: &McpClient,
    url: &str,
    oauth: &OAuthClient,
    issuer: &str,
    token_response: &[u8],
) -> Result<(), String> {
    let target = Target::new(url, None)
        .map_err(|e| e.to_string())?
        .with_oauth(client.authorizers(), oauth);
    let authorizer = target.auth.ok_or("no authorizer")?;
    authorizer.keep_granted(issuer, token_response)
}

/// Finds the authorizer that a call with `oauth` to the server at `url` uses, as the
/// executor does (made if none is kept; now the most recently used).
pub fn touch(client: &McpClient, url: &str, oauth: &OAuthClient) -> Result<(), String> {
    let target = Target::new(url, None)
        .map_err(|e| e.to_string())?
        .with_oauth(client.authorizers(), oauth);
    target.auth.map(drop).ok_or_else(|| "no authorizer".into())
}
