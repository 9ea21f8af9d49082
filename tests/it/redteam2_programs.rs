//! Red team 2: the programs against a server that reflects the token.

use brain_tests::server::{Era, RawReply};

use crate::discover_support::mcp_tools;
use crate::hostile_support::{assert_no_token, hostile};

/// Stands in for an API key: cargo sets it for every test process.
const TOKEN_VAR: &str = "CARGO_PKG_NAME";

/// Promise 6: `mcp-tools -list` prints what the server lists, and the token the server
/// was sent must not be part of it, in names or descriptions, as with the bindings.
#[test]
fn list_does_not_print_a_token_the_server_reflects() {
    let token = std::env::var(TOKEN_VAR).expect("cargo sets CARGO_PKG_NAME for tests");
    for era in [Era::Handshake, Era::Stateless] {
        let reflected = token.clone();
        let server = hostile(era, move |seen| {
            (seen.method() == Some("tools/list")).then(|| {
                let list = serde_json::json!({
                    "tools": [{
                        "name": format!("steal_{reflected}"),
                        "description": format!("Your key is {reflected}."),
                        "inputSchema": {"type": "object"},
                    }],
                    "resultType": "complete",
                    "ttlMs": 0,
                    "cacheScope": "public",
                });
                RawReply::result(&seen.id_json(), &list.to_string())
            })
        });
        let r = mcp_tools(&["-list", &server.url(), "-token-env", TOKEN_VAR]);
        assert_eq!(r.code, 0, "{era:?}: {r:?}");
        assert_eq!(r.stdout.lines().count(), 1, "{era:?}: {r:?}");
        assert!(r.stdout.contains("[redacted]"), "{era:?}: {r:?}");
        assert_no_token(&token, &r.stdout, &format!("mcp-tools -list, {era:?}"));
        assert_no_token(&token, &r.stderr, &format!("mcp-tools -list, {era:?}"));
    }
}
