//! The pool's bounds: least recently used first, never one a call holds, by bytes as by
//! count, one at a time; and one authorizer per credentials.

use std::sync::{Arc, Weak};

use brain_tools_core::Secret;

use super::{Authorizers, ENTRY_OVERHEAD};
use crate::auth::{Authorizer, ClientProof, Credentials, OAuthClient};

const SERVER: &str = "https://mcp.example/mcp";

/// The credentials of tenant `principal`.
fn client(principal: &str) -> OAuthClient {
    OAuthClient::pinned(
        "https://as.example",
        "brain-host",
        ClientProof::Secret(Secret::new("s3cret-of-the-host")),
    )
    .for_principal(principal)
}

/// The authorizer of `principal`, seen without being held.
fn seen(pool: &Authorizers, principal: &str) -> Weak<Authorizer> {
    Arc::downgrade(&pool.get(SERVER, &client(principal)))
}

fn alive(w: &Weak<Authorizer>) -> bool {
    w.strong_count() > 0
}

/// Gives the authorizer of `principal` a token of `bytes` bytes.
fn hold_token(pool: &Authorizers, principal: &str, bytes: usize) {
    let authorizer = pool.get(SERVER, &client(principal));
    let who = Credentials::of(&client(principal)).unwrap();
    let body = format!(
        r#"{{"access_token":"{}","token_type":"Bearer"}}"#,
        "a".repeat(bytes)
    );
    let token = brain_mcp_proto::auth::token::read_token(200, body.as_bytes()).unwrap();
    authorizer
        .keep(token, None, "https://as.example", &who)
        .unwrap();
}

#[test]
fn the_same_credentials_share_one_authorizer() {
    let pool = Authorizers::default();
    let a = pool.get(SERVER, &client("alice"));
    let again = pool.get(SERVER, &client("alice"));
    let bob = pool.get(SERVER, &client("bob"));
    let elsewhere = pool.get("https://other.example/mcp", &client("alice"));
    assert!(Arc::ptr_eq(&a, &again));
    assert!(!Arc::ptr_eq(&a, &bob));
    assert!(!Arc::ptr_eq(&a, &elsewhere));
    assert_eq!(pool.usage().0, 3);
}

#[test]
fn the_least_recently_used_goes_first() {
    let pool = Authorizers::new(2, usize::MAX);
    let a = seen(&pool, "a");
    let b = seen(&pool, "b");
    // Used again: now b is the least recent.
    assert!(alive(&seen(&pool, "a")));
    let c = seen(&pool, "c");
    assert!(alive(&a) && alive(&c), "the recently used stay");
    assert!(!alive(&b), "the least recently used went");
    assert_eq!(pool.usage().0, 2);
}

#[test]
fn an_authorizer_a_call_holds_is_never_dropped() {
    let pool = Authorizers::new(1, usize::MAX);
    let a = pool.get(SERVER, &client("a"));
    let b = seen(&pool, "b");
    let c = seen(&pool, "c");
    assert!(!alive(&b), "the one no call holds went");
    assert!(alive(&c), "the newest is kept");
    assert_eq!(
        pool.usage().0,
        2,
        "past the bound while a call holds one, rather than refused"
    );
    let a_again = pool.get(SERVER, &client("a"));
    assert!(Arc::ptr_eq(&a, &a_again), "the held one kept its tokens");
}

#[test]
fn a_burst_past_the_bound_drops_one_at_a_time() {
    let pool = Authorizers::new(100, usize::MAX);
    let first: Vec<_> = (0..100).map(|i| seen(&pool, &format!("t{i}"))).collect();
    for i in 0..10 {
        let _new = seen(&pool, &format!("new{i}"));
        assert_eq!(pool.usage().0, 100);
        for (j, w) in first.iter().enumerate() {
            assert_eq!(alive(w), j > i, "after {} new ones, t{j}", i + 1);
        }
    }
}

#[test]
fn tokens_count_in_the_bytes_bound() {
    let pool = Authorizers::new(usize::MAX, 3 * ENTRY_OVERHEAD + 6000);
    let a = seen(&pool, "a");
    let (_, empty) = pool.usage();
    assert!(empty >= ENTRY_OVERHEAD, "{empty}");
    hold_token(&pool, "a", 5000);
    let (_, with_token) = pool.usage();
    assert!(with_token >= empty + 5000, "{with_token} after {empty}");
    let b = seen(&pool, "b");
    assert!(
        alive(&a) && alive(&b),
        "within the bound: {:?}",
        pool.usage()
    );
    hold_token(&pool, "b", 5000);
    let c = seen(&pool, "c");
    assert!(!alive(&a), "past the bytes bound the least recent went");
    assert!(alive(&b) && alive(&c));
    let (count, bytes) = pool.usage();
    assert_eq!(count, 2);
    assert!(bytes <= 3 * ENTRY_OVERHEAD + 6000, "{bytes}");
    assert!(
        bytes < with_token + ENTRY_OVERHEAD * 2,
        "a's tokens were taken out"
    );
}

#[test]
fn a_lower_bound_takes_effect_at_once_and_debug_shows_no_key() {
    let pool = Authorizers::default();
    let kept: Vec<_> = (0..10)
        .map(|i| seen(&pool, &format!("tenant-{i}")))
        .collect();
    pool.set_limits(4, usize::MAX);
    assert_eq!(pool.usage().0, 4);
    assert_eq!(kept.iter().filter(|w| alive(w)).count(), 4);
    assert!(kept[6..].iter().all(alive), "the four most recent stay");
    let shown = format!("{pool:?}");
    assert!(shown.contains("count: 4"), "{shown}");
    for hidden in ["tenant-", "s3cret", "mcp.example", "brain-host"] {
        assert!(!shown.contains(hidden), "{shown}");
    }
}
