//! The root's `token_store`: what it takes and how its problems read, in both loaders.

use serde_json::{Value, json};

use crate::HostConfig;

fn load(store: Value) -> Result<HostConfig, Vec<String>> {
    let document = json!({"tools": [], "token_store": store});
    let streamed = HostConfig::load(&document.to_string());
    let parsed = HostConfig::from_value(&document);
    let show = |r: Result<HostConfig, crate::ConfigErrors>| {
        r.map_err(|e| {
            e.errors()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })
    };
    let (streamed, parsed) = (show(streamed), show(parsed));
    assert_eq!(
        streamed.as_ref().map(HostConfig::token_store).ok(),
        parsed.as_ref().map(HostConfig::token_store).ok(),
        "both loaders agree"
    );
    assert_eq!(streamed.as_ref().err(), parsed.as_ref().err());
    parsed
}

#[test]
fn a_token_store_names_its_variables() {
    let config = load(json!({"postgres_url_env": "BRAIN_DB", "key_env": "BRAIN_KEYS"})).unwrap();
    let store = config.token_store().unwrap();
    assert_eq!(store.postgres_url_env, "BRAIN_DB");
    assert_eq!(store.key_env, "BRAIN_KEYS");
    assert_eq!(store.lease_seconds, 30);
    let config = load(json!({
        "postgres_url_env": "A", "key_env": "B", "lease_seconds": 45,
    }))
    .unwrap();
    assert_eq!(config.token_store().unwrap().lease_seconds, 45);
    let none = HostConfig::from_value(&json!({"tools": []})).unwrap();
    assert!(none.token_store().is_none());
}

#[test]
fn a_token_store_s_problems_name_the_field() {
    assert_eq!(
        load(json!("postgres://u:p@h/db")).unwrap_err(),
        ["token_store: must be an object: {\"postgres_url_env\": \"VAR\", \"key_env\": \"VAR\"}"]
    );
    assert_eq!(
        load(json!({"postgres_url": "postgres://u:p@h/db", "key_env": "K"})).unwrap_err(),
        [
            "token_store.postgres_url: unknown field; expected one of: postgres_url_env, key_env, \
             lease_seconds",
            "token_store.postgres_url_env: required field is missing",
        ]
    );
    let errors = load(json!({
        "postgres_url_env": "not a name", "key_env": 7, "lease_seconds": 0,
    }))
    .unwrap_err();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("token_store.postgres_url_env: "),
        "{errors:?}"
    );
    assert_eq!(
        errors[1],
        "token_store.key_env: must be the name of an environment variable"
    );
    assert_eq!(
        errors[2],
        "token_store.lease_seconds: must be a whole number from 30 (two token requests and two \
         database operations) to 600"
    );
    let short = load(json!({
        "postgres_url_env": "A", "key_env": "B", "lease_seconds": 29,
    }))
    .unwrap_err();
    assert!(
        short[0].starts_with("token_store.lease_seconds: must be a whole number from 30"),
        "{short:?}"
    );
}
