//! The token store a host config names (`token_store`), made from its variables.

use std::sync::Arc;

use super::store::{StoreError, TokenStore};

/// The store a host config's `token_store` names, its variables read now. Without the
/// `postgres` feature, a config naming one is refused (the tokens would otherwise stay
/// per process, silently).
pub fn token_store_from_config(
    config: &brain_tools_core::TokenStoreConfig,
) -> Result<Arc<dyn TokenStore>, StoreError> {
    #[cfg(feature = "postgres")]
    {
        let store = super::postgres::PostgresTokenStore::from_env(
            &config.postgres_url_env,
            &config.key_env,
        )?
        .with_lease_ttl(std::time::Duration::from_secs(config.lease_seconds));
        Ok(Arc::new(store))
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = config;
        Err(StoreError::new(
            super::store::StoreErrorKind::Config,
            "token_store: this build has no Postgres token store (the `postgres` feature)",
        ))
    }
}
