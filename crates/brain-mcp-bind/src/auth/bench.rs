//! What `brain-bench tenants` asks of an authorizer (behind the `bench` feature).

use brain_mcp_proto::auth::{HttpUrl, Search, Step};

use super::{Authorizer, Credentials, footprint};

impl Authorizer {
    /// Learns the authority of `server` from `documents` (its protected resource
    /// metadata, then its authorization server's metadata, as a search fetches them) and
    /// keeps the token granted in `token_response` (a token endpoint's JSON body) to the
    /// client's own credentials: what a first call with client credentials leaves behind,
    /// for `brain-bench tenants`.
    pub(crate) fn learn_and_keep(
        &self,
        server: &HttpUrl,
        documents: [&[u8]; 2],
        token_response: &[u8],
    ) -> Result<(), String> {
        let mut search = Search::new(server, None, self.client.issuer.as_deref());
        let mut documents = documents.into_iter();
        let authority = loop {
            match search.step() {
                Step::Fetch(_) => search.handle(documents.next().map(|d| (200, d))),
                Step::Found(authority) => break *authority,
                Step::Failed(e) => return Err(e.to_string()),
                _ => return Err("the search cannot go on".into()),
            }
        };
        let who = Credentials::of(&self.client).ok_or("the credentials have no client id")?;
        let token = brain_mcp_proto::auth::token::read_token(200, token_response)
            .map_err(|e| e.to_string())?;
        self.keep(token, None, &authority.issuer, &who)
            .map_err(|e| e.to_string())?;
        let mut flight = self.flight.try_lock().map_err(|_| "a token request runs")?;
        self.footprint
            .set_authority(footprint::weigh_authority(&authority));
        flight.authority = Some(authority);
        Ok(())
    }
}
