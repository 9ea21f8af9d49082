//! The root's `token_store`: where every host process sharing OAuth tokens keeps them
//! (`docs/config.md`, "Token store").

use serde_json::Value;

use super::error::{Errors, field_path};
use super::rules;

/// The root field naming the shared token store.
pub(crate) const TOKEN_STORE: &str = "token_store";

/// The fields of `token_store`.
const FIELDS: &[&str] = &["postgres_url_env", "key_env", "lease_seconds"];

/// The longest lease the config accepts, in seconds.
const MAX_LEASE_SECONDS: u64 = 600;

/// The shortest lease the config accepts, in seconds: what the holder may do under it
/// at most, two token requests (a refresh, then the client's grant when the refresh
/// is refused; 10 s each) and two database operations (the save, and a load after a
/// conflict; 5 s each). The lease is extended right before the token request.
pub(crate) const MIN_LEASE_SECONDS: u64 = 2 * 10 + 2 * 5;

/// A token store on Postgres shared by host processes: the environment variables
/// holding its connection URL and its encryption keys (names only: the values are read
/// when the host starts), and how long a refresh's lease lasts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenStoreConfig {
    /// The variable holding the Postgres connection URL.
    pub postgres_url_env: String,
    /// The variable holding the keys that seal tokens at rest: comma-separated, each 32
    /// bytes in standard base64, the first sealing.
    pub key_env: String,
    /// How long a refresh's lease lasts, in seconds (default and least
    /// `MIN_LEASE_SECONDS`, 30): longer than what its holder may do under it.
    pub lease_seconds: u64,
}

/// Checks `value`, the root's `token_store`; problems go to `errors`.
pub(crate) fn parse(value: &Value, errors: &mut Errors) -> Option<TokenStoreConfig> {
    let Some(object) = value.as_object() else {
        errors.push(
            TOKEN_STORE,
            "must be an object: {\"postgres_url_env\": \"VAR\", \"key_env\": \"VAR\"}",
        );
        return None;
    };
    let before = errors.len();
    for key in object.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        errors.push(
            &field_path(TOKEN_STORE, key),
            format!("unknown field; expected one of: {}", FIELDS.join(", ")),
        );
    }
    let mut var = |name: &str| -> Option<String> {
        let path = field_path(TOKEN_STORE, name);
        match object.get(name) {
            None => errors.push(&path, "required field is missing"),
            Some(Value::String(var)) => match rules::check_env_name(var) {
                Ok(()) => return Some(var.clone()),
                Err(reason) => errors.push(&path, reason.to_string()),
            },
            Some(_) => errors.push(&path, "must be the name of an environment variable"),
        }
        None
    };
    let url = var("postgres_url_env");
    let key = var("key_env");
    let lease_seconds = match object.get("lease_seconds") {
        None => MIN_LEASE_SECONDS,
        Some(v) => match v
            .as_u64()
            .filter(|s| (MIN_LEASE_SECONDS..=MAX_LEASE_SECONDS).contains(s))
        {
            Some(s) => s,
            None => {
                errors.push(
                    &field_path(TOKEN_STORE, "lease_seconds"),
                    format!(
                        "must be a whole number from {MIN_LEASE_SECONDS} (two token requests \
                         and two database operations) to {MAX_LEASE_SECONDS}"
                    ),
                );
                0
            }
        },
    };
    if errors.len() > before {
        return None;
    }
    Some(TokenStoreConfig {
        postgres_url_env: url?,
        key_env: key?,
        lease_seconds,
    })
}
