//! The Postgres token store against a real Postgres (`cargo xtask ci` starts one under
//! `target/` and sets `BRAIN_TEST_POSTGRES_URL`; a plain `cargo test` without it says so
//! and skips, unless `BRAIN_REQUIRE_POSTGRES` is set, which fails instead). Each test
//! uses rows of its own, so they share the database.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

mod pg;

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use brain_mcp_bind::{
    Lease, PostgresTokenStore, Secret, StoreErrorKind, StoredTokens, TokenKey, TokenStore,
};

fn key_text(byte: u8) -> String {
    STANDARD.encode([byte; 32])
}

fn store(url: &str, keys: &str) -> PostgresTokenStore {
    PostgresTokenStore::new("URL", url, "KEY", keys).expect("a store")
}

/// A row of this test alone.
fn row(test: &str) -> TokenKey {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    TokenKey::new(
        Some(&format!("{test}-{nanos}")),
        "https://mcp.example/mcp",
        "client",
    )
}

fn tokens(access: &str) -> StoredTokens {
    let mut t = StoredTokens::new("https://as.example");
    t.access_token = Some(Secret::new(access));
    t.refresh_token = Some(Secret::new(format!("refresh-of-{access}")));
    t.expires_at = Some(SystemTime::now() + Duration::from_secs(60));
    t.scope = Some("read".into());
    t
}

#[tokio::test]
async fn saves_are_compare_and_swap_and_round_trip_sealed() {
    let Some(url) = pg::url() else { return };
    let store = store(&url, &key_text(1));
    store.check().await.expect("connects and makes its table");
    let k = row("cas");
    assert_eq!(store.load(&k).await.unwrap(), None);
    let v1 = store.save(&k, None, &tokens("at-1")).await.unwrap();
    let again = store.save(&k, None, &tokens("at-x")).await.unwrap_err();
    assert_eq!(again.kind(), StoreErrorKind::Conflict);
    let v2 = store.save(&k, Some(v1), &tokens("at-2")).await.unwrap();
    let stale = store.save(&k, Some(v1), &tokens("at-y")).await.unwrap_err();
    assert_eq!(stale.kind(), StoreErrorKind::Conflict);
    let loaded = store.load(&k).await.unwrap().expect("a row");
    assert_eq!(loaded.version, v2);
    assert_eq!(
        loaded.tokens.access_token.as_ref().map(Secret::expose),
        Some("at-2")
    );
    assert_eq!(
        loaded.tokens.refresh_token.as_ref().map(Secret::expose),
        Some("refresh-of-at-2")
    );
    assert_eq!(loaded.tokens.scope.as_deref(), Some("read"));
    // At rest, the token is sealed: not in the row's bytes.
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let raw = client
        .query_one(
            "SELECT sealed FROM brain_tokens WHERE row_key = $1",
            &[&k.encoded()],
        )
        .await
        .unwrap();
    let sealed: Vec<u8> = raw.get(0);
    assert!(!String::from_utf8_lossy(&sealed).contains("at-2"));
    // A second store (another process) sees the same row.
    let other = store_again(&url);
    assert_eq!(other.load(&k).await.unwrap().map(|v| v.version), Some(v2));
}

fn store_again(url: &str) -> PostgresTokenStore {
    store(url, &key_text(1))
}

#[tokio::test]
async fn a_lease_is_one_holders_until_released_or_expired() {
    let Some(url) = pg::url() else { return };
    let store = store(&url, &key_text(1));
    let k = row("lease");
    let long = Duration::from_secs(60);
    assert_eq!(store.lease(&k, "a", long).await.unwrap(), Lease::Granted);
    match store.lease(&k, "b", long).await.unwrap() {
        Lease::Held { until } => assert!(until > SystemTime::now() + Duration::from_secs(30)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.lease(&k, "a", long).await.unwrap(),
        Lease::Granted,
        "extended"
    );
    store.release(&k, "b").await.unwrap();
    assert!(matches!(
        store.lease(&k, "b", long).await.unwrap(),
        Lease::Held { .. }
    ));
    store.release(&k, "a").await.unwrap();
    // A lease that expires (its holder died) is taken over.
    assert_eq!(
        store
            .lease(&k, "b", Duration::from_millis(1))
            .await
            .unwrap(),
        Lease::Granted
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(store.lease(&k, "c", long).await.unwrap(), Lease::Granted);
    // A lease before any save leaves the row without tokens; a first save still works.
    assert_eq!(store.load(&k).await.unwrap(), None);
    store.save(&k, None, &tokens("at")).await.unwrap();
}

#[tokio::test]
async fn a_wrong_key_or_a_corrupt_or_moved_row_fails_as_unreadable() {
    let Some(url) = pg::url() else { return };
    let first = store(&url, &key_text(1));
    let k = row("keys");
    first.save(&k, None, &tokens("at-1")).await.unwrap();
    // Another key: the row names the one it needs.
    let wrong = store(&url, &key_text(2));
    let err = wrong.load(&k).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Unreadable, "{err}");
    assert!(
        err.to_string().contains("not among the keys given"),
        "{err}"
    );
    // Rotated: a new key first, the old one after, reads it and seals with the new.
    let rotated = store(&url, &format!("{},{}", key_text(2), key_text(1)));
    let loaded = rotated
        .load(&k)
        .await
        .unwrap()
        .expect("opened with the old key");
    rotated
        .save(&k, Some(loaded.version), &tokens("at-2"))
        .await
        .unwrap();
    assert!(
        wrong.load(&k).await.unwrap().is_some(),
        "now sealed with the new key"
    );
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    // A row moved under another key does not open (the row's key is bound in).
    let moved = row("moved");
    rotated.save(&moved, None, &tokens("at-3")).await.unwrap();
    client
        .execute(
            "UPDATE brain_tokens SET sealed = (SELECT sealed FROM brain_tokens WHERE row_key = $1), \
             key_id = (SELECT key_id FROM brain_tokens WHERE row_key = $1) WHERE row_key = $2",
            &[&k.encoded(), &moved.encoded()],
        )
        .await
        .unwrap();
    let err = rotated.load(&moved).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Unreadable, "{err}");
    // A flipped byte.
    client
        .execute(
            "UPDATE brain_tokens SET sealed = set_byte(sealed, 20, get_byte(sealed, 20) # 1) \
             WHERE row_key = $1",
            &[&k.encoded()],
        )
        .await
        .unwrap();
    let err = rotated.load(&k).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Unreadable, "{err}");
    assert!(!err.to_string().contains("at-2"));
}

#[tokio::test]
async fn a_database_down_or_silent_fails_on_time_without_the_password() {
    let password = "pw-never-shown-7c1e";
    // Down: nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let down = store(
        &format!("postgres://brain:{password}@127.0.0.1:{port}/postgres"),
        &key_text(1),
    )
    .with_timeout(Duration::from_secs(2));
    let err = down.load(&row("down")).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Unavailable, "{err}");
    assert!(!err.to_string().contains(password), "{err}");
    // Silent: accepts, never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let slow = store(
        &format!("postgres://brain:{password}@127.0.0.1:{port}/postgres"),
        &key_text(1),
    )
    .with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = slow
        .lease(&row("slow"), "h", Duration::from_secs(5))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Timeout, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the timeout"
    );
    assert!(!err.to_string().contains(password) && !format!("{slow:?}").contains(password));
    // Settings that cannot be used say which variable, never its value.
    let err = PostgresTokenStore::new("DB_URL", "no such url ::", "KEY", &key_text(1)).unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Config);
    assert_eq!(err.to_string(), "DB_URL: not a Postgres connection URL");
    let err = PostgresTokenStore::from_env("BRAIN_UNSET_VARIABLE_FOR_TEST", "K").unwrap_err();
    assert_eq!(err.to_string(), "BRAIN_UNSET_VARIABLE_FOR_TEST is not set");
}

/// A session of the test's own, as an operator's.
async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

#[tokio::test]
async fn a_role_without_create_uses_tables_made_before() {
    let Some(url) = pg::url() else { return };
    store(&url, &key_text(1)).check().await.unwrap();
    let role = format!("brain_rw_{}", std::process::id());
    let password = "least-privilege-7d2a";
    // The same server as the role: the URL's user (and password) replaced.
    let (Some(scheme), Some(at)) = (url.find("://"), url.find('@')) else {
        eprintln!("the URL names no user: skipping");
        return;
    };
    let limited = format!("{}{role}:{password}{}", &url[..scheme + 3], &url[at..]);
    let admin = admin(&url).await;
    admin
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{password}'; \
             GRANT SELECT, INSERT, UPDATE, DELETE ON brain_tokens, brain_token_schema TO {role}; \
             REVOKE CREATE ON SCHEMA public FROM {role}"
        ))
        .await
        .unwrap();
    let store = store(&limited, &key_text(1));
    let k = row("least-privilege");
    let result = async {
        store.check().await?;
        let v = store.save(&k, None, &tokens("at")).await?;
        assert_eq!(
            store.lease(&k, "h", Duration::from_secs(5)).await?,
            Lease::Granted
        );
        store.release(&k, "h").await?;
        Ok::<_, brain_mcp_bind::StoreError>((v, store.load(&k).await?))
    }
    .await;
    drop(store);
    let _ = admin
        .batch_execute(&format!(
            "REVOKE ALL ON brain_tokens, brain_token_schema FROM {role}; DROP ROLE {role}"
        ))
        .await;
    let (v, loaded) = result.expect("SELECT, INSERT, UPDATE, DELETE are enough");
    assert_eq!(loaded.map(|l| l.version), Some(v));
}

#[tokio::test]
async fn a_statement_given_up_leaves_no_backend_waiting() {
    let Some(url) = pg::url() else { return };
    let store = store(&url, &key_text(1)).with_timeout(Duration::from_millis(300));
    let k = row("locked");
    let v = store.save(&k, None, &tokens("at")).await.unwrap();
    // Another session holds the row's lock: every save waits on it.
    let locker = admin(&url).await;
    locker
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM brain_tokens WHERE row_key = '{}' FOR UPDATE",
            k.encoded().replace('\'', "''")
        ))
        .await
        .unwrap();
    for _ in 0..5 {
        assert!(store.save(&k, Some(v), &tokens("at-2")).await.is_err());
    }
    let watcher = admin(&url).await;
    let mut waiting = i64::MAX;
    for _ in 0..50 {
        waiting = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
                 AND query LIKE 'UPDATE brain_tokens%'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if waiting == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    locker.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(waiting, 0, "a save given up was cancelled on the server");
}

#[tokio::test]
async fn a_row_larger_than_brain_writes_is_not_read() {
    let Some(url) = pg::url() else { return };
    let store = store(&url, &key_text(1));
    let k = row("huge");
    store.save(&k, None, &tokens("at")).await.unwrap();
    let admin = admin(&url).await;
    admin
        .execute(
            "UPDATE brain_tokens SET key_id = repeat('k', 3000), \
             sealed = decode(repeat('00', 1000000), 'hex') WHERE row_key = $1",
            &[&k.encoded()],
        )
        .await
        .unwrap();
    let err = store.load(&k).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Unreadable, "{err}");
    assert!(err.to_string().len() < 200, "{err}");
    // A key id of a writer not Brain is not echoed.
    admin
        .execute(
            "UPDATE brain_tokens SET key_id = '\"<script>x', sealed = '\\x00' \
             WHERE row_key = $1",
            &[&k.encoded()],
        )
        .await
        .unwrap();
    let err = store.load(&k).await.unwrap_err();
    assert_eq!(err.to_string(), "a row's key id is malformed");
}
