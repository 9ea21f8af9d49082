use super::*;
use crate::auth::bearer;

const SERVER: &str = "https://mcp.example.com/mcp";
const PRM_PATH: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
const PRM_ROOT: &str = "https://mcp.example.com/.well-known/oauth-protected-resource";
const AS_META: &str = "https://auth.example.com/.well-known/oauth-authorization-server";
const AS_OIDC: &str = "https://auth.example.com/.well-known/openid-configuration";

fn search(challenge: Option<&str>, pinned: Option<&str>) -> Search {
    let challenge = challenge.and_then(bearer);
    Search::new(&HttpUrl::parse(SERVER).unwrap(), challenge.as_ref(), pinned)
}

fn prm(issuers: &[&str]) -> String {
    serde_json::json!({ "resource": SERVER, "authorization_servers": issuers, "scopes_supported": ["r"] })
        .to_string()
}

fn as_meta(issuer: &str) -> String {
    serde_json::json!({ "issuer": issuer, "token_endpoint": format!("{issuer}/token") }).to_string()
}

/// Runs `search` against `answers` (URL -> status and body; absent URLs are 404s) and
/// returns the URLs fetched and the final step.
fn run(mut search: Search, answers: &[(&str, u16, &str)]) -> (Vec<String>, Step) {
    let mut fetched = Vec::new();
    for _ in 0..20 {
        match search.step() {
            Step::Fetch(url) => {
                let answer = answers.iter().find(|(u, _, _)| *u == url);
                search.handle(Some(
                    answer.map_or((404, &b""[..]), |(_, s, b)| (*s, b.as_bytes())),
                ));
                fetched.push(url);
            }
            done => return (fetched, done),
        }
    }
    panic!("the search never ended: {fetched:?}");
}

#[test]
fn challenge_then_issuer_metadata() {
    let prm = prm(&["https://auth.example.com"]);
    let meta = as_meta("https://auth.example.com");
    let (fetched, step) = run(
        search(
            Some("Bearer resource_metadata=\"https://mcp.example.com/prm\""),
            None,
        ),
        &[
            ("https://mcp.example.com/prm", 200, &prm),
            (AS_META, 200, &meta),
        ],
    );
    assert_eq!(fetched, ["https://mcp.example.com/prm", AS_META]);
    let Step::Found(found) = step else {
        panic!("{step:?}")
    };
    assert_eq!(found.resource, SERVER);
    assert_eq!(found.issuer, "https://auth.example.com");
    assert_eq!(
        found.server.token_endpoint.as_deref(),
        Some("https://auth.example.com/token")
    );
    assert_eq!(found.scopes_supported, Some(vec!["r".to_owned()]));
}

#[test]
fn well_known_order_and_openid_fallback() {
    let prm = prm(&["https://auth.example.com"]);
    let meta = as_meta("https://auth.example.com");
    let (fetched, step) = run(
        search(None, None),
        &[(PRM_ROOT, 200, &prm), (AS_OIDC, 200, &meta)],
    );
    assert_eq!(fetched, [PRM_PATH, PRM_ROOT, AS_META, AS_OIDC]);
    assert!(matches!(step, Step::Found(_)));
}

#[test]
fn a_mismatched_resource_stops_everything() {
    let other = serde_json::json!({ "resource": "https://evil.example.com/mcp", "authorization_servers": ["https://auth.example.com"] }).to_string();
    let (fetched, step) = run(search(None, None), &[(PRM_PATH, 200, &other)]);
    assert_eq!(fetched, [PRM_PATH]);
    assert!(
        matches!(step, Step::Failed(AuthError::ResourceMismatch { .. })),
        "{step:?}"
    );
}

#[test]
fn an_issuer_mismatch_stops_everything() {
    let prm = prm(&["https://auth.example.com"]);
    let meta = as_meta("https://evil.example.com");
    let (fetched, step) = run(
        search(None, None),
        &[(PRM_PATH, 200, &prm), (AS_META, 200, &meta)],
    );
    assert_eq!(fetched, [PRM_PATH, AS_META]);
    assert!(
        matches!(step, Step::Failed(AuthError::IssuerMismatch { .. })),
        "{step:?}"
    );
}

#[test]
fn a_pinned_issuer_must_be_listed() {
    let other = prm(&["https://evil.example.com"]);
    let (fetched, step) = run(
        search(None, Some("https://auth.example.com")),
        &[(PRM_PATH, 200, &other)],
    );
    // Nothing is asked of the server the metadata names.
    assert_eq!(fetched, [PRM_PATH]);
    assert!(
        matches!(step, Step::Failed(AuthError::IssuerNotListed { .. })),
        "{step:?}"
    );
    // Listed with a trailing slash: the listed spelling is the one checked.
    let listed = prm(&["https://evil.example.com", "https://auth.example.com/"]);
    let meta = as_meta("https://auth.example.com/");
    let (_, step) = run(
        search(None, Some("https://auth.example.com")),
        &[(PRM_PATH, 200, &listed), (AS_META, 200, &meta)],
    );
    let Step::Found(found) = step else {
        panic!("{step:?}")
    };
    assert_eq!(found.issuer, "https://auth.example.com/");
}

#[test]
fn no_resource_metadata_falls_back_to_2025_03_26() {
    let origin_meta = as_meta("https://mcp.example.com");
    let (fetched, step) = run(
        search(None, None),
        &[(
            "https://mcp.example.com/.well-known/oauth-authorization-server",
            200,
            &origin_meta,
        )],
    );
    assert_eq!(fetched.len(), 3);
    let Step::Found(found) = step else {
        panic!("{step:?}")
    };
    assert_eq!(found.issuer, "https://mcp.example.com");
    assert_eq!(found.resource, SERVER);
    assert!(!found.defaults);
    // Nothing at all: the default endpoints at the server's origin.
    let (_, step) = run(search(None, None), &[]);
    let Step::Found(found) = step else {
        panic!("{step:?}")
    };
    assert_eq!(
        found.server.token_endpoint.as_deref(),
        Some("https://mcp.example.com/token")
    );
    assert_eq!(
        found.server.authorization_endpoint.as_deref(),
        Some("https://mcp.example.com/authorize")
    );
}

#[test]
fn a_pinned_issuer_without_resource_metadata_is_asked_directly() {
    let meta = as_meta("https://auth.example.com");
    let (fetched, step) = run(
        search(None, Some("https://auth.example.com")),
        &[(AS_META, 200, &meta)],
    );
    assert_eq!(fetched, [PRM_PATH, PRM_ROOT, AS_META]);
    assert!(matches!(step, Step::Found(_)));
    // And never the default endpoints at the MCP server's origin.
    let (_, step) = run(search(None, Some("https://auth.example.com")), &[]);
    assert!(
        matches!(step, Step::Failed(AuthError::NoServerMetadata { .. })),
        "{step:?}"
    );
}

#[test]
fn unusable_answers_move_on() {
    let prm = prm(&["https://auth.example.com"]);
    let meta = as_meta("https://auth.example.com");
    let mut s = search(None, None);
    // A transport failure on the first URL, garbage on the second.
    s.handle(None);
    assert_eq!(s.step(), Step::Fetch(PRM_ROOT.into()));
    s.handle(Some((200, b"{not json")));
    // Both failed: the 2025-03-26 fallback at the origin.
    let Step::Fetch(url) = s.step() else { panic!() };
    assert!(url.ends_with("/.well-known/oauth-authorization-server"));
    let (_, step) = run(
        search(None, None),
        &[
            (PRM_PATH, 200, &prm),
            (AS_META, 500, &meta),
            (AS_OIDC, 200, &meta),
        ],
    );
    assert!(matches!(step, Step::Found(_)));
}

#[test]
fn endpoints_must_be_safe_to_use() {
    let listed = prm(&["https://auth.example.com"]);
    for (field, value) in [
        ("authorization_endpoint", "javascript:alert(1)"),
        ("token_endpoint", "http://auth.example.com/token"),
        ("registration_endpoint", "https://auth.example.com/r#x"),
    ] {
        let mut meta: serde_json::Value =
            serde_json::from_str(&as_meta("https://auth.example.com")).unwrap();
        meta[field] = serde_json::json!(value);
        let meta = meta.to_string();
        let (_, step) = run(
            search(None, None),
            &[(PRM_PATH, 200, &listed), (AS_META, 200, &meta)],
        );
        assert!(
            matches!(step, Step::Failed(AuthError::Url { .. })),
            "{field}: {step:?}"
        );
    }
    // An issuer over plain http to a remote host is never asked.
    let plain = prm(&["http://auth.example.com"]);
    let (fetched, step) = run(search(None, None), &[(PRM_PATH, 200, &plain)]);
    assert_eq!(fetched, [PRM_PATH]);
    assert!(
        matches!(step, Step::Failed(AuthError::Url { what: "issuer", .. })),
        "{step:?}"
    );
}
