//! The `oauth` block inside a binding: where it may stand and how its problems read.

use serde_json::json;

use super::{errors_of, mcp, one_error, with, without};
use crate::{Binding, HostConfig, SecretVar};

fn block() -> serde_json::Value {
    json!({
        "issuer": "https://auth.example.com",
        "client_id": "brain-host",
        "client_secret_env": "MCP_CLIENT_SECRET",
    })
}

#[test]
fn an_mcp_binding_takes_oauth_instead_of_token_env() {
    let binding = with(without(mcp("x"), "token_env"), "oauth", block());
    let loaded = Binding::from_value(&binding).unwrap();
    let oauth = loaded.oauth().unwrap();
    assert_eq!(oauth.client_id(), "brain-host");
    assert_eq!(
        oauth.secret(),
        &SecretVar::Secret("MCP_CLIENT_SECRET".into())
    );
    assert!(loaded.token_env().is_none());
    assert_eq!(loaded.secret_env(), Some("MCP_CLIENT_SECRET"));
    assert_eq!(
        Binding::from_value(&mcp("t")).unwrap().secret_env(),
        Some("MCP_API_KEY")
    );
    // The config form loads back into an equal binding.
    assert_eq!(Binding::from_value(&loaded.to_value()).unwrap(), loaded);
    // Debug names the variable, as it does for token_env.
    assert!(format!("{loaded:?}").contains("MCP_CLIENT_SECRET"));
}

#[test]
fn oauth_is_refused_beside_token_env_or_off_mcp() {
    assert_eq!(
        one_error(with(mcp("x"), "oauth", block())),
        "tools[1].oauth: not allowed with token_env; a binding has one kind of credential"
    );
    let http = with(
        without(without(mcp("x"), "mcp_tool"), "token_env"),
        "oauth",
        block(),
    );
    assert_eq!(
        one_error(http),
        "tools[1].oauth: only allowed on an MCP binding (mcp_tool is set)"
    );
}

#[test]
fn problems_inside_the_block_are_reported_at_their_field() {
    let bad = json!({ "client_id": "c", "client_secret_env": "A", "scops": [] });
    let errors = errors_of(vec![with(without(mcp("x"), "token_env"), "oauth", bad)]);
    assert_eq!(
        errors,
        [
            "tools[0].oauth.scops: unknown field; expected one of: issuer, client_id, client_secret_env, private_key_env, workload_token_file, workload_token_env, scopes, dpop",
            "tools[0].oauth.issuer: required: credentials go to this authorization server only",
        ]
    );
    let streamed = HostConfig::load(
        &json!({ "tools": [with(without(mcp("x"), "token_env"), "oauth", json!(7))] }).to_string(),
    );
    let errors = streamed.unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "tools[0].oauth: must be an object"
    );
}
