use super::*;

fn meta(doc: serde_json::Value) -> ServerMetadata {
    ServerMetadata::parse(doc.to_string().as_bytes()).unwrap()
}

#[test]
fn the_authorization_url_carries_every_parameter() {
    let req = AuthorizationRequest::new(
        "c 1",
        "http://localhost:3/cb",
        "st",
        "ch",
        "https://m.example/mcp",
        Some("a b"),
    );
    assert_eq!(
        req.url("https://as.example/authorize"),
        "https://as.example/authorize?response_type=code&client_id=c+1&redirect_uri=http%3A%2F%2Flocalhost%3A3%2Fcb\
         &state=st&code_challenge=ch&code_challenge_method=S256&resource=https%3A%2F%2Fm.example%2Fmcp&scope=a+b"
    );
    // An endpoint with a query keeps it; no scope, no parameter.
    let req = AuthorizationRequest::new("c", "r", "s", "x", "res", None);
    let url = req.url("https://as.example/authorize?tenant=1");
    assert!(url.starts_with("https://as.example/authorize?tenant=1&response_type=code"));
    assert!(!url.contains("scope="));
}

#[test]
fn redirects_are_checked_for_state_and_iss() {
    let ok = "http://localhost/cb?code=abc%2B1&state=s1&iss=https%3A%2F%2Fas.example";
    assert_eq!(
        read_redirect(ok, "s1", "https://as.example", true).unwrap(),
        "abc+1"
    );
    // Wrong state.
    assert!(read_redirect(ok, "s2", "https://as.example", true).is_err());
    // iss compared as a string: a trailing slash is another issuer.
    assert!(read_redirect(ok, "s1", "https://as.example/", true).is_err());
    // Promised but missing.
    let bare = "http://localhost/cb?code=abc&state=s1";
    assert!(matches!(
        read_redirect(bare, "s1", "https://as.example", true),
        Err(AuthError::Redirect { .. })
    ));
    assert_eq!(
        read_redirect(bare, "s1", "https://as.example", false).unwrap(),
        "abc"
    );
    // Unexpected and wrong.
    let evil = "http://localhost/cb?code=abc&state=s1&iss=https://evil.example";
    assert!(read_redirect(evil, "s1", "https://as.example", false).is_err());
    // An error answer, and no code.
    let err =
        read_redirect("http://l/cb?error=access_denied&state=s1", "s1", "i", false).unwrap_err();
    assert!(err.to_string().contains("access_denied"));
    assert_eq!(err, AuthError::AccessDenied, "the user's no, told apart");
    let other =
        read_redirect("http://l/cb?error=server_error&state=s1", "s1", "i", false).unwrap_err();
    assert!(matches!(other, AuthError::Redirect { .. }), "{other:?}");
    assert!(read_redirect("http://l/cb?state=s1", "s1", "i", false).is_err());
    // A forged error (wrong state) is refused for its state; an error code that is not one
    // is not repeated; a repeated parameter is refused.
    let forged =
        read_redirect("http://l/cb?error=access_denied&state=zz", "s1", "i", false).unwrap_err();
    assert!(forged.to_string().contains("state"), "{forged}");
    let odd = read_redirect(
        "http://l/cb?error=Secret%20Stuff&state=s1",
        "s1",
        "i",
        false,
    )
    .unwrap_err();
    assert!(!odd.to_string().contains("Secret"), "{odd}");
    assert!(read_redirect("http://l/cb?code=a&code=b&state=s1", "s1", "i", false).is_err());
    assert!(read_redirect("http://l/cb?code=a&state=s1&state=s1", "s1", "i", false).is_err());
    assert!(read_redirect("http://l/cb", "s1", "i", false).is_err());
}

#[test]
fn pkce_needs_s256_unless_defaults() {
    let with = meta(
        serde_json::json!({"issuer": "i", "code_challenge_methods_supported": ["plain", "S256"]}),
    );
    assert!(check_pkce(&with, false).is_ok());
    let without = meta(serde_json::json!({"issuer": "i"}));
    assert!(check_pkce(&without, false).is_err());
    assert!(check_pkce(&without, true).is_ok());
}

#[test]
fn offline_access_only_when_offered() {
    let offered = meta(
        serde_json::json!({"issuer": "i", "scopes_supported": ["mcp:basic", "offline_access"]}),
    );
    let not = meta(serde_json::json!({"issuer": "i", "scopes_supported": ["mcp:basic"]}));
    assert_eq!(
        with_offline_access(Some("mcp:basic".into()), &offered).as_deref(),
        Some("mcp:basic offline_access")
    );
    assert_eq!(
        with_offline_access(None, &offered).as_deref(),
        Some("offline_access")
    );
    assert_eq!(
        with_offline_access(Some("a offline_access".into()), &offered).as_deref(),
        Some("a offline_access")
    );
    assert_eq!(
        with_offline_access(Some("mcp:basic".into()), &not).as_deref(),
        Some("mcp:basic")
    );
    assert_eq!(with_offline_access(None, &not), None);
}

#[test]
fn registration_asks_and_reads() {
    let server = meta(
        serde_json::json!({"issuer": "i", "token_endpoint_auth_methods_supported": ["client_secret_post"]}),
    );
    let body: serde_json::Value =
        serde_json::from_str(&registration_body("Brain", "http://localhost/cb", &server)).unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "client_secret_post");
    assert_eq!(body["application_type"], "native");
    assert_eq!(
        body["grant_types"],
        serde_json::json!(["authorization_code", "refresh_token"])
    );
    let got = Registered::read(201, br#"{"client_id":"c1","client_secret":"s3cr3t","token_endpoint_auth_method":"client_secret_post"}"#).unwrap();
    assert_eq!(got.auth(&server), ClientAuth::Post);
    assert!(!format!("{got:?}").contains("s3cr3t"));
    let public = Registered::read(201, br#"{"client_id":"c2"}"#).unwrap();
    assert_eq!(public.auth(&server), ClientAuth::None);
    assert_eq!(
        Registered::read(400, b"{}").unwrap_err(),
        AuthError::RegistrationRefused { status: 400 }
    );
    assert!(Registered::read(201, br#"{"client_id":""}"#).is_err());
}
