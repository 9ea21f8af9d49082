//! Entry points for `brain-bench tenants` (`bench/`): tenants' authorizers made as calls
//! make them, without a server. Not a stable API.

use brain_mcp_proto::auth::token::read_token;

use super::{Credentials, OAuthClient};
use crate::McpClient;
use crate::target::Target;

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
    let who = Credentials::of(oauth).ok_or("the credentials have no client id")?;
    let token = read_token(200, token_response).map_err(|e| e.to_string())?;
    authorizer
        .keep(token, None, issuer, &who)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Finds the authorizer that a call with `oauth` to the server at `url` uses, as the
/// executor does (made if none is kept; now the most recently used).
pub fn touch(client: &McpClient, url: &str, oauth: &OAuthClient) -> Result<(), String> {
    let target = Target::new(url, None)
        .map_err(|e| e.to_string())?
        .with_oauth(client.authorizers(), oauth);
    target.auth.map(drop).ok_or_else(|| "no authorizer".into())
}
