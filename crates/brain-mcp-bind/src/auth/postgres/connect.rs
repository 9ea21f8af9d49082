//! The store's database session: the URL's checks (TLS off this machine), connecting
//! with server-side timeouts just under the store's own, making the tables only when
//! missing (so a role without `CREATE` can use tables made before), and cancelling what
//! a session was doing when the store gave up on it.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{CancelToken, Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::super::store::{StoreError, StoreErrorKind};

/// The schema this Brain makes and reads.
pub(super) const SCHEMA: i32 = 1;

/// Makes the tables (under an advisory lock: processes starting together make them
/// once). Run only when a table or the schema's row is missing.
const MIGRATE: &str = "
BEGIN;
SELECT pg_advisory_xact_lock(7349118261);
CREATE TABLE IF NOT EXISTS brain_token_schema (version integer NOT NULL);
INSERT INTO brain_token_schema (version)
    SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM brain_token_schema);
CREATE TABLE IF NOT EXISTS brain_tokens (
    row_key text PRIMARY KEY,
    principal text,
    server_url text NOT NULL,
    client text NOT NULL,
    version bigint NOT NULL DEFAULT 0,
    lease_holder text,
    lease_until timestamptz,
    key_id text,
    sealed bytea,
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMIT;";

/// Whether both tables are there, and the schema's version (none: no row yet).
const FIND: &str = "SELECT to_regclass('brain_tokens') IS NOT NULL \
    AND to_regclass('brain_token_schema') IS NOT NULL";

/// A connected session: its client, what cancels its statement, and the task driving
/// its connection (aborted when the session is given up).
pub(super) struct Session {
    pub(super) client: Arc<Client>,
    cancel: CancelToken,
    task: tokio::task::JoinHandle<()>,
}

impl Session {
    /// Gives the session up: its statement cancelled on the server (in a task of its
    /// own, bounded by `timeout`), its connection closed.
    pub(super) fn abandon(self, tls: MakeRustlsConnect, timeout: Duration) {
        self.task.abort();
        let cancel = self.cancel;
        tokio::spawn(async move {
            let _ = tokio::time::timeout(timeout, cancel.cancel_query(tls)).await;
        });
    }
}

fn config_error(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Config, message)
}

/// The URL `url` (from `name`) parsed and made safe: a host off this machine is reached
/// over TLS only (`sslmode=prefer`, the default, becomes `require`; `disable` is
/// refused). A URL refused says which option, never a value.
pub(super) fn parse(name: &str, url: &str) -> Result<Config, StoreError> {
    let mut config: Config = url.parse().map_err(|e: tokio_postgres::Error| {
        let option = std::error::Error::source(&e)
            .map(ToString::to_string)
            .filter(|s| s.starts_with("invalid value for option") && s.len() < 64)
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        config_error(format!("{name}: not a Postgres connection URL{option}"))
    })?;
    if !on_this_machine(&config) {
        match config.get_ssl_mode() {
            SslMode::Disable => {
                return Err(config_error(format!(
                    "{name}: sslmode=disable is refused for a database off this machine: the \
                     tokens would cross the network in the clear (use sslmode=require)"
                )));
            }
            SslMode::Prefer => {
                config.ssl_mode(SslMode::Require);
            }
            _ => {}
        }
    }
    Ok(config)
}

/// Whether every host `config` may connect to is this machine: a Unix socket, the
/// name `localhost`, or a loopback address (no host at all means the local socket).
fn on_this_machine(config: &Config) -> bool {
    let hosts = config.get_hosts().iter().all(|host| match host {
        Host::Unix(_) => true,
        Host::Tcp(name) => {
            let name = name.trim_start_matches('[').trim_end_matches(']');
            name.eq_ignore_ascii_case("localhost")
                || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
    });
    hosts && config.get_hostaddrs().iter().all(IpAddr::is_loopback)
}

/// A session to `config`: connected, its statements and lock waits bounded just under
/// `timeout` on the server, the tables made if missing. `failed` words a database error.
pub(super) async fn connect(
    config: &Config,
    tls: MakeRustlsConnect,
    timeout: Duration,
    failed: impl Fn(&str, &tokio_postgres::Error) -> StoreError,
) -> Result<Session, StoreError> {
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| failed("connect", &e))?;
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    let session = Session {
        cancel: client.cancel_token(),
        client: Arc::new(client),
        task,
    };
    let client = &session.client;
    let under = timeout
        .saturating_sub(timeout / 10)
        .max(Duration::from_millis(1));
    client
        .batch_execute(&format!(
            "SET statement_timeout = {0}; SET lock_timeout = {0}",
            under.as_millis()
        ))
        .await
        .map_err(|e| failed("setting the timeouts", &e))?;
    let found: bool = client
        .query_one(FIND, &[])
        .await
        .map_err(|e| failed("finding the tables", &e))?
        .get(0);
    let mut schema = None;
    if found {
        schema = client
            .query_one("SELECT max(version) FROM brain_token_schema", &[])
            .await
            .map_err(|e| failed("reading the schema version", &e))?
            .get::<_, Option<i32>>(0);
    }
    if schema.is_none() {
        client
            .batch_execute(MIGRATE)
            .await
            .map_err(|e| failed("making the tables", &e))?;
    }
    if let Some(newer) = schema.filter(|s| *s > SCHEMA) {
        return Err(config_error(format!(
            "postgres: the token table has schema {newer}, newer than this Brain's {SCHEMA}"
        )));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_database_is_reached_over_tls_only() {
        let remote = parse("U", "postgres://u:pw@db.example/x").unwrap();
        assert_eq!(
            remote.get_ssl_mode(),
            SslMode::Require,
            "prefer is upgraded"
        );
        let error = parse("U", "postgres://u:pw@db.example/x?sslmode=disable").unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Config);
        assert!(error.to_string().contains("sslmode=disable"), "{error}");
        assert!(!error.to_string().contains("pw"), "{error}");
        let hostaddr = "postgres://u@localhost/x?hostaddr=10.0.0.1&sslmode=disable";
        assert!(parse("U", hostaddr).is_err(), "hostaddr is where it goes");
        for local in [
            "postgres://u@127.0.0.1:5432/x?sslmode=disable",
            "postgres://u@localhost/x?sslmode=disable",
            "postgres://u@[::1]/x?sslmode=disable",
            "postgres://u@%2Frun%2Fpostgresql/x",
        ] {
            let config = parse("U", local).unwrap();
            assert_ne!(config.get_ssl_mode(), SslMode::Require, "{local}");
        }
    }

    #[test]
    fn a_url_refused_names_the_option_not_the_password() {
        let error = parse("U", "postgres://u:hunter2@db.example/x?sslmode=allow").unwrap_err();
        let text = error.to_string();
        assert!(text.contains("`sslmode`"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}
