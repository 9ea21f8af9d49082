//! What a managed HTTP server's tools are listed with when it was given no credential of
//! its own: the host's credential source, asked for one tenant.

use super::managed::Kind;
use super::{HostError, HostErrorKind, ManagedServer, ToolHost};
use crate::Credential;

impl ToolHost {
    /// The credential an HTTP server's tools are listed with when none was given in code
    /// ([`ManagedServer::bearer`], [`ManagedServer::oauth`]): the host's credential
    /// source, asked for the first tenant the server's tools are for (a listing is the
    /// same for every tenant). `None` when the server has its own, or there is no source
    /// or no tenant; an error when the source refuses that tenant.
    pub(super) async fn listing_credential(
        &self,
        server: &ManagedServer,
    ) -> Result<Option<Credential>, HostError> {
        let Kind::Http {
            url,
            token: None,
            oauth: None,
            ..
        } = &server.kind
        else {
            return Ok(None);
        };
        let Some(tenant) = server.tools.iter().find_map(|t| t.tenants.first()) else {
            return Ok(None);
        };
        match self.inner.executor.credential(tenant, url).await {
            Credential::NotAuthorized => Err(HostError::new(
                HostErrorKind::Refused,
                format!(
                    "server {:?}: the credential source gives tenant {tenant:?} no credentials \
                     for it, so its tools cannot be listed; nothing was sent",
                    server.name
                ),
            )),
            credential => Ok(Some(credential)),
        }
    }
}
