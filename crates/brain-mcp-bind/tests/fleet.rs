//! A fleet of `mcp-call` processes sharing OAuth tokens through the Postgres token store
//! (the host config's `token_store`), against a real Postgres: `cargo xtask ci` starts
//! one under `target/` and sets `BRAIN_TEST_POSTGRES_URL`; a plain `cargo test` without
//! it says so and skips (with `BRAIN_REQUIRE_POSTGRES` set it fails instead).
//!
//! The authorization server rotates refresh tokens and revokes the grant when a used one
//! comes back. `processes_hammering_one_grant_lose_nothing` runs for 3 s by default and
//! for `BRAIN_FLEET_SECONDS` when set (`cargo xtask ci` sets a minute).
#![cfg(all(feature = "postgres", unix))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

mod pg;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use brain_tests::auth::TestAuthServer;
use brain_tests::server::{Era, TestServer};
use serde_json::{Value, json};

const CALL: &str = env!("CARGO_BIN_EXE_mcp-call");
const CLIENT: &str = "fleet-host";
const SECRET: &str = "fleet-client-secret-5f0b";
/// How long a refresh's lease lasts: the least the config accepts (two token requests
/// and two database operations).
const LEASE_SECONDS: u64 = 30;

/// A host config for the echo tool of `server` with machine credentials for `auth`,
/// its tokens in the Postgres store with leases of `lease` seconds; written to a file of
/// its own.
fn config_with(server: &TestServer, auth: &TestAuthServer, name: &str, lease: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brain-fleet-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host.json");
    let config = json!({
        "tools": [{
            "name": "echo",
            "description": "echo",
            "input_schema": {"type": "object"},
            "url": server.url(),
            "mcp_tool": "echo",
            "tenants": ["acme"],
            "timeout_seconds": LEASE_SECONDS + 15,
            "oauth": {
                "issuer": auth.url(),
                "client_id": CLIENT,
                "client_secret_env": "FLEET_CLIENT_SECRET",
            },
        }],
        "token_store": {
            "postgres_url_env": "FLEET_PG_URL",
            "key_env": "FLEET_PG_KEY",
            "lease_seconds": lease,
        },
    });
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// [`config_with`] long leases.
fn config(server: &TestServer, auth: &TestAuthServer, name: &str) -> PathBuf {
    config_with(server, auth, name, LEASE_SECONDS)
}

/// `mcp-call` of the echo tool with `config`, started.
fn spawn(config: &std::path::Path, url: &str) -> Child {
    spawn_with_key(config, url, &STANDARD.encode([42u8; 32]))
}

/// `mcp-call` of the echo tool with `config`, sealing with `key`, started.
fn spawn_with_key(config: &std::path::Path, url: &str, key: &str) -> Child {
    Command::new(CALL)
        .args(["-config", &config.display().to_string()])
        .args([
            "-tenant",
            "acme",
            "-tool",
            "echo",
            "-args",
            r#"{"text":"hi"}"#,
        ])
        .env("FLEET_CLIENT_SECRET", SECRET)
        .env("FLEET_PG_URL", url)
        .env("FLEET_PG_KEY", key)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether the call succeeded; the output shown if not.
fn succeeded(out: &Output) -> Result<(), String> {
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Option<Value> = text
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok());
    match result {
        Some(r) if out.status.success() && r["is_error"] == false => Ok(()),
        _ => Err(format!(
            "{}: {text} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

fn grants(auth: &TestAuthServer, grant: &str) -> usize {
    auth.token_requests()
        .iter()
        .filter(|r| r.form("grant_type").as_deref() == Some(grant))
        .count()
}

#[test]
fn twenty_processes_started_together_make_one_token_request() {
    let Some(url) = pg::url() else { return };
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let config = config(&server, &auth, "twenty");
    let children: Vec<Child> = (0..20).map(|_| spawn(&config, &url)).collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        succeeded(&out).unwrap();
    }
    assert_eq!(
        auth.token_requests().len(),
        1,
        "one token for twenty processes"
    );
}

#[test]
fn processes_hammering_one_grant_lose_nothing() {
    let Some(url) = pg::url() else { return };
    let seconds = std::env::var("BRAIN_FLEET_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| {
        c.refresh_tokens = true;
        c.rotate_refresh_tokens = true;
        c.expires_in = Some(2);
    });
    let config = config(&server, &auth, "hammer");
    let until = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (config, url) = (config.clone(), url.clone());
            std::thread::spawn(move || {
                let mut calls = 0;
                while Instant::now() < until {
                    let out = spawn(&config, &url).wait_with_output().unwrap();
                    succeeded(&out).unwrap();
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    let calls: u32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(calls >= 4, "{calls} calls");
    assert_eq!(auth.revocations(), 0, "no refresh token was used twice");
    assert_eq!(
        grants(&auth, "client_credentials"),
        1,
        "no re-authorization: the grant lived through every renewal"
    );
    if seconds >= 3 {
        assert!(grants(&auth, "refresh_token") >= 1, "tokens were renewed");
    }
    eprintln!(
        "{calls} calls in {seconds}s, {} refreshes",
        grants(&auth, "refresh_token")
    );
}

#[test]
fn a_process_killed_holding_the_lease_blocks_others_for_the_lease_at_most() {
    let Some(url) = pg::url() else { return };
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    auth.configure(|c| c.hang_token_requests = 1);
    let config = config_with(&server, &auth, "killed", LEASE_SECONDS);
    // The first process takes the lease and asks for a token, which never comes.
    let mut holder = spawn(&config, &url);
    let waited = Instant::now();
    while auth.token_requests().is_empty() {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "no token request"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = Command::new("kill")
        .args(["-KILL", &holder.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    holder.wait().unwrap();
    // The next waits for the dead holder's lease to expire, then takes it over.
    let started = Instant::now();
    let out = spawn(&config, &url).wait_with_output().unwrap();
    succeeded(&out).unwrap();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(1),
        "took {took:?}: the dead holder's lease was not honoured"
    );
    assert!(
        took < Duration::from_secs(LEASE_SECONDS + 5),
        "blocked {took:?}, past the {LEASE_SECONDS}s lease"
    );
    assert_eq!(auth.token_requests().len(), 2);
}

/// The failure a call ended with: its kind and message.
fn failure(out: &Output) -> (String, String) {
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(text.lines().last().unwrap_or("{}")).unwrap();
    assert_eq!(result["is_error"], true, "{result}");
    (
        result["error"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        result["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn a_database_that_is_down_fails_the_call_on_time_naming_the_store() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let config = config(&server, &auth, "down");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("postgres://brain:pw-of-the-fleet-9d2@127.0.0.1:{port}/postgres");
    let started = Instant::now();
    let out = spawn(&config, &url).wait_with_output().unwrap();
    let (kind, message) = failure(&out);
    assert_eq!(kind, "authorization_failed");
    assert!(message.contains("token store (unavailable)"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(20), "on time");
    assert!(
        auth.token_requests().is_empty(),
        "no token around the store"
    );
    let all = format!("{out:?}");
    assert!(
        !all.contains("pw-of-the-fleet-9d2"),
        "the password never shows"
    );
}

#[test]
fn a_corrupt_row_fails_clearly_and_sends_no_token() {
    let Some(url) = pg::url() else { return };
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let config = config(&server, &auth, "corrupt");
    succeeded(&spawn(&config, &url).wait_with_output().unwrap()).unwrap();
    // Every row of this server gets a byte flipped.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let changed = runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .execute(
                "UPDATE brain_tokens SET sealed = set_byte(sealed, 13, get_byte(sealed, 13) # 1) \
                 WHERE server_url = $1",
                &[&server.url()],
            )
            .await
            .unwrap()
    });
    assert_eq!(changed, 1);
    let out = spawn(&config, &url).wait_with_output().unwrap();
    let (kind, message) = failure(&out);
    assert_eq!(kind, "authorization_failed");
    assert!(message.contains("token store (unreadable)"), "{message}");
    assert_eq!(auth.token_requests().len(), 1, "no token around the store");
    for r in &server.stats().received {
        if let Some(a) = &r.authorization {
            assert_eq!(
                a,
                &format!("Bearer {}", auth.issued()[0]),
                "no garbage token"
            );
        }
    }
}

#[test]
fn a_wrong_key_fails_clearly_and_sends_no_token() {
    let Some(url) = pg::url() else { return };
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let config = config(&server, &auth, "wrong-key");
    succeeded(&spawn(&config, &url).wait_with_output().unwrap()).unwrap();
    let received = server.stats().received.len();
    // Another key: the row cannot be opened; the call fails naming why.
    let out = spawn_with_key(&config, &url, &STANDARD.encode([7u8; 32]))
        .wait_with_output()
        .unwrap();
    let (kind, message) = failure(&out);
    assert_eq!(kind, "authorization_failed");
    assert!(message.contains("token store (unreadable)"), "{message}");
    assert!(message.contains("not among the keys given"), "{message}");
    assert_eq!(auth.token_requests().len(), 1, "no token around the store");
    // The store is read before anything goes to the server: nothing was sent to it.
    assert_eq!(server.stats().received.len(), received);
}

#[test]
fn a_store_whose_variables_are_unset_fails_the_start_naming_them() {
    let (auth, server) = TestAuthServer::guarding(Era::Stateless, CLIENT, SECRET);
    let path = config(&server, &auth, "unset");
    // mcp-call: a usage error naming the variable, before anything is sent.
    let out = Command::new(CALL)
        .args(["-config", &path.display().to_string()])
        .args(["-tenant", "acme", "-tool", "echo", "-args", "{}"])
        .env_remove("FLEET_PG_URL")
        .env("FLEET_PG_KEY", STANDARD.encode([42u8; 32]))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FLEET_PG_URL is not set"), "{err}");
    assert!(auth.seen().is_empty() && server.stats().received.is_empty());
    // ToolHost: refused as invalid, naming it.
    let config =
        brain_tools_core::HostConfig::load(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let Err(err) = brain_mcp_bind::ToolHost::new(config, brain_mcp_bind::ClientConfig::default())
    else {
        panic!("a host whose store cannot be made starts");
    };
    assert_eq!(err.kind(), brain_mcp_bind::HostErrorKind::Invalid);
    assert!(err.to_string().contains("FLEET_PG_URL is not set"), "{err}");
}
