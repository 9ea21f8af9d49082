//! The token store on Postgres (feature `postgres`), shared by every host process that
//! names the same database: one row per [`TokenKey`] holding its version, its lease
//! (holder and expiry, on the database's clock) and the tokens sealed (AES-256-GCM, the
//! row's key bound in). Brain makes the table itself. Every operation is bounded by a
//! timeout; a database that is down or slow fails with [`StoreErrorKind::Timeout`] or
//! [`StoreErrorKind::Unavailable`], its messages never holding the URL's password.

mod connect;
mod seal;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use brain_tools_core::Secret;
use serde_json::{Value, json};
use tokio_postgres::Client;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::store::StoredTokens;
use super::store::{
    DEFAULT_LEASE_TTL, Lease, StoreError, StoreErrorKind, TokenKey, TokenStore, Version, Versioned,
};
use seal::Keys;

/// The most a row's sealed tokens may weigh, in bytes: a token response is at most
/// 64 KiB, so a larger row was not written by a Brain and is not read.
const MAX_SEALED: i32 = 128 * 1024;
/// The longest key id read (a Brain's are 8 characters).
const MAX_KEY_ID: i32 = 64;

/// How long one database operation (a connection included) may take by default.
pub const DEFAULT_DB_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`TokenStore`] on Postgres. Connects when first used (making its table if
/// missing), and again after the connection is lost. Its `Debug` shows the key ids and
/// the timeout, never the URL or a key.
pub struct PostgresTokenStore {
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    password: Option<Secret>,
    keys: Keys,
    session: tokio::sync::Mutex<Option<connect::Session>>,
    timeout: Duration,
    ttl: Duration,
}

impl std::fmt::Debug for PostgresTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTokenStore")
            .field("keys", &self.keys)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn config_error(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Config, message)
}

impl PostgresTokenStore {
    /// The store at the URL in the variable `url_env`, sealing with the keys in
    /// `key_env` (comma-separated, each 32 bytes in standard base64; the first seals).
    /// Nothing is connected yet. Errors name the variables, never their values.
    pub fn from_env(url_env: &str, key_env: &str) -> Result<Self, StoreError> {
        let read = |var: &str| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| config_error(format!("{var} is not set")))
        };
        let url = read(url_env)?;
        let keys = read(key_env)?;
        Self::new(url_env, &url, key_env, &keys)
    }

    /// The store at `url`, sealing with `keys` (as [`Self::from_env`] reads them);
    /// `url_name` and `key_name` say where they came from, in errors.
    pub fn new(url_name: &str, url: &str, key_name: &str, keys: &str) -> Result<Self, StoreError> {
        brain_mcp_proto::text::learn(url);
        let config = connect::parse(url_name, url)?;
        let password = config
            .get_password()
            .map(|p| Secret::new(String::from_utf8_lossy(p)));
        if let Some(p) = &password {
            brain_mcp_proto::text::learn(p.expose());
        }
        let keys = Keys::parse(key_name, keys)?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|_| config_error("TLS: no protocol version".to_owned()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            config,
            tls: MakeRustlsConnect::new(tls),
            password,
            keys,
            session: tokio::sync::Mutex::new(None),
            timeout: DEFAULT_DB_TIMEOUT,
            ttl: DEFAULT_LEASE_TTL,
        })
    }

    /// Every database operation bounded by `timeout` (connecting included).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Leases asked for `ttl`.
    #[must_use]
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Connects now and makes the table if missing: a host checks its store at start.
    pub async fn check(&self) -> Result<(), StoreError> {
        self.bounded(async { self.client().await.map(|_| ()) })
            .await
    }

    /// A database failure as a store error, its text without the password.
    fn db_error(&self, what: &str, error: &tokio_postgres::Error) -> StoreError {
        let detail = match error.as_db_error() {
            Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
            None => error.to_string(),
        };
        let detail = match &self.password {
            Some(p) if !p.expose().is_empty() => detail.replace(p.expose(), "[redacted]"),
            _ => detail,
        };
        StoreError::new(
            StoreErrorKind::Unavailable,
            format!("postgres {what}: {detail}"),
        )
    }

    /// The connection, made (and the tables with it, if missing) if there is none or
    /// it closed.
    async fn client(&self) -> Result<Arc<Client>, StoreError> {
        let mut held = self.session.lock().await;
        if let Some(session) = held.as_ref().filter(|s| !s.client.is_closed()) {
            return Ok(session.client.clone());
        }
        if let Some(closed) = held.take() {
            closed.abandon(self.tls.clone(), self.timeout);
        }
        let session = connect::connect(&self.config, self.tls.clone(), self.timeout, |what, e| {
            self.db_error(what, e)
        })
        .await?;
        let client = session.client.clone();
        *held = Some(session);
        Ok(client)
    }

    /// `op` within the timeout; past it, the session is given up (it may be stuck):
    /// its statement cancelled on the server, its connection closed.
    async fn bounded<T>(
        &self,
        op: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, op).await {
            Ok(result) => result,
            Err(_) => {
                if let Some(session) = self.session.try_lock().ok().and_then(|mut h| h.take()) {
                    session.abandon(self.tls.clone(), self.timeout);
                }
                Err(StoreError::new(
                    StoreErrorKind::Timeout,
                    format!("postgres: no answer within {} ms", self.timeout.as_millis()),
                ))
            }
        }
    }
}

/// Tokens as the sealed JSON holds them.
fn to_json(tokens: &StoredTokens) -> Vec<u8> {
    let expires = tokens
        .expires_at
        .and_then(|at| at.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    json!({
        "issuer": tokens.issuer,
        "access_token": tokens.access_token.as_ref().map(Secret::expose),
        "expires_at": expires,
        "refresh_token": tokens.refresh_token.as_ref().map(Secret::expose),
        "scope": tokens.scope,
    })
    .to_string()
    .into_bytes()
}

fn from_json(plain: &[u8]) -> Result<StoredTokens, StoreError> {
    let bad = || StoreError::new(StoreErrorKind::Unreadable, "a row's tokens are malformed");
    let value: Value = serde_json::from_slice(plain).map_err(|_| bad())?;
    let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let mut tokens = StoredTokens::new(text("issuer").ok_or_else(bad)?);
    tokens.access_token = text("access_token").map(Secret::new);
    tokens.refresh_token = text("refresh_token").map(Secret::new);
    tokens.scope = text("scope");
    tokens.expires_at = value
        .get("expires_at")
        .and_then(Value::as_u64)
        .map(|s| UNIX_EPOCH + Duration::from_secs(s));
    Ok(tokens)
}

/// A row's version: a save's, taken from the database's clock in microseconds (and
/// always past the row's last), so a row deleted and saved again never repeats a
/// version a process may still hold.
fn version(n: i64) -> Version {
    Version::new(u64::try_from(n).unwrap_or_default())
}

#[async_trait]
impl TokenStore for PostgresTokenStore {
    async fn load(&self, key: &TokenKey) -> Result<Option<Versioned>, StoreError> {
        let row_key = key.encoded();
        let row = self
            .bounded(async {
                self.client()
                    .await?
                    .query_opt(
                        "SELECT version, \
                         octet_length(sealed) <= $2 AND coalesce(length(key_id), 0) <= $3, \
                         CASE WHEN octet_length(sealed) <= $2 \
                         AND coalesce(length(key_id), 0) <= $3 THEN key_id END, \
                         CASE WHEN octet_length(sealed) <= $2 \
                         AND coalesce(length(key_id), 0) <= $3 THEN sealed END \
                         FROM brain_tokens WHERE row_key = $1 AND sealed IS NOT NULL",
                        &[&row_key, &MAX_SEALED, &MAX_KEY_ID],
                    )
                    .await
                    .map_err(|e| self.db_error("load", &e))
            })
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (n, fits): (i64, bool) = (row.get(0), row.get(1));
        let (id, sealed): (Option<String>, Option<Vec<u8>>) = (row.get(2), row.get(3));
        let (true, Some(sealed)) = (fits, sealed) else {
            return Err(StoreError::new(
                StoreErrorKind::Unreadable,
                format!(
                    "a row's sealed tokens or key id are larger than a Brain writes \
                     ({MAX_SEALED} bytes, {MAX_KEY_ID} characters)"
                ),
            ));
        };
        let plain = self
            .keys
            .open(&row_key, id.as_deref().unwrap_or_default(), &sealed)?;
        Ok(Some(Versioned::new(version(n), from_json(&plain)?)))
    }

    async fn save(
        &self,
        key: &TokenKey,
        expected: Option<Version>,
        tokens: &StoredTokens,
    ) -> Result<Version, StoreError> {
        let row_key = key.encoded();
        let (id, sealed) = self.keys.seal(&row_key, &to_json(tokens))?;
        let row = self
            .bounded(async {
                let client = self.client().await?;
                let found = match expected {
                    None => {
                        client
                            .query_opt(
                                "INSERT INTO brain_tokens \
                                 (row_key, principal, server_url, client, version, key_id, sealed) \
                                 VALUES ($1, $2, $3, $4, \
                                 (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
                                 $5, $6) \
                                 ON CONFLICT (row_key) DO UPDATE SET \
                                 version = greatest(brain_tokens.version + 1, \
                                 (extract(epoch FROM clock_timestamp()) * 1000000)::bigint), key_id = EXCLUDED.key_id, \
                                 sealed = EXCLUDED.sealed, updated_at = now() \
                                 WHERE brain_tokens.sealed IS NULL RETURNING version",
                                &[
                                    &row_key,
                                    &key.principal,
                                    &key.server_url,
                                    &key.client,
                                    &id,
                                    &sealed,
                                ],
                            )
                            .await
                    }
                    Some(v) => {
                        let v = i64::try_from(v.get()).unwrap_or(-1);
                        client
                            .query_opt(
                                "UPDATE brain_tokens SET version = greatest(version + 1, \
                                 (extract(epoch FROM clock_timestamp()) * 1000000)::bigint), \
                                 key_id = $2, \
                                 sealed = $3, updated_at = now() \
                                 WHERE row_key = $1 AND version = $4 AND sealed IS NOT NULL \
                                 RETURNING version",
                                &[&row_key, &id, &sealed, &v],
                            )
                            .await
                    }
                };
                found.map_err(|e| self.db_error("save", &e))
            })
            .await?;
        row.map(|r| version(r.get(0)))
            .ok_or_else(StoreError::conflict)
    }

    async fn lease(
        &self,
        key: &TokenKey,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError> {
        let row_key = key.encoded();
        let millis = ttl.as_secs_f64() * 1000.0;
        self.bounded(async {
            let client = self.client().await?;
            let granted = client
                .query_opt(
                    "INSERT INTO brain_tokens \
                     (row_key, principal, server_url, client, lease_holder, lease_until) \
                     VALUES ($1, $2, $3, $4, $5, now() + $6::float8 * interval '1 millisecond') \
                     ON CONFLICT (row_key) DO UPDATE SET \
                     lease_holder = EXCLUDED.lease_holder, lease_until = EXCLUDED.lease_until \
                     WHERE brain_tokens.lease_holder IS NULL \
                     OR brain_tokens.lease_holder = EXCLUDED.lease_holder \
                     OR brain_tokens.lease_until <= now() RETURNING 1",
                    &[
                        &row_key,
                        &key.principal,
                        &key.server_url,
                        &key.client,
                        &holder,
                        &millis,
                    ],
                )
                .await
                .map_err(|e| self.db_error("lease", &e))?;
            if granted.is_some() {
                return Ok(Lease::Granted);
            }
            let until = client
                .query_opt(
                    "SELECT (extract(epoch FROM lease_until) * 1000)::bigint FROM brain_tokens \
                     WHERE row_key = $1",
                    &[&row_key],
                )
                .await
                .map_err(|e| self.db_error("lease", &e))?
                .and_then(|r| r.get::<_, Option<i64>>(0))
                .and_then(|ms| u64::try_from(ms).ok())
                .map_or_else(SystemTime::now, |ms| UNIX_EPOCH + Duration::from_millis(ms));
            Ok(Lease::Held { until })
        })
        .await
    }

    async fn release(&self, key: &TokenKey, holder: &str) -> Result<(), StoreError> {
        let row_key = key.encoded();
        self.bounded(async {
            self.client()
                .await?
                .execute(
                    "UPDATE brain_tokens SET lease_holder = NULL, lease_until = NULL \
                     WHERE row_key = $1 AND lease_holder = $2",
                    &[&row_key, &holder],
                )
                .await
                .map_err(|e| self.db_error("release", &e))
        })
        .await
        .map(|_| ())
    }

    fn lease_ttl(&self) -> Duration {
        self.ttl
    }
}
