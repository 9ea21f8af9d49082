use super::*;

fn meta(methods: Option<&[&str]>) -> ServerMetadata {
    let mut doc = serde_json::json!({ "issuer": "https://a.example" });
    if let Some(m) = methods {
        doc["token_endpoint_auth_methods_supported"] = serde_json::json!(m);
    }
    ServerMetadata::parse(doc.to_string().as_bytes()).unwrap()
}

#[test]
fn secret_method_follows_the_metadata() {
    assert_eq!(ClientAuth::for_secret(&meta(None)), Ok(ClientAuth::Basic));
    assert_eq!(
        ClientAuth::for_secret(&meta(Some(&["client_secret_post"]))),
        Ok(ClientAuth::Post)
    );
    assert_eq!(
        ClientAuth::for_secret(&meta(Some(&["client_secret_post", "client_secret_basic"]))),
        Ok(ClientAuth::Basic)
    );
    assert!(ClientAuth::for_secret(&meta(Some(&["private_key_jwt"]))).is_err());
    assert_eq!(
        ClientAuth::for_key(&meta(Some(&["private_key_jwt"]))),
        Ok(ClientAuth::PrivateKeyJwt)
    );
    assert!(ClientAuth::for_key(&meta(None)).is_err());
}

#[test]
fn client_credentials_forms() {
    let mut form = grant_form(
        Grant::ClientCredentials,
        "https://mcp.example.com/mcp",
        Some("a b"),
    );
    assert_eq!(
        form.body(),
        "grant_type=client_credentials&resource=https%3A%2F%2Fmcp.example.com%2Fmcp&scope=a+b"
    );
    let basic = client_form(&mut form, ClientAuth::Basic, "id:1", "s&cret");
    // The parts are form-encoded before base64 (RFC 6749 §2.3.1); the form is unchanged.
    assert_eq!(basic.as_deref(), Some("Basic aWQlM0ExOnMlMjZjcmV0"));
    assert!(!form.body().contains("client_id"));
    let mut post = grant_form(Grant::ClientCredentials, "r", None);
    assert_eq!(client_form(&mut post, ClientAuth::Post, "id", "sec"), None);
    assert_eq!(
        post.body(),
        "grant_type=client_credentials&resource=r&client_id=id&client_secret=sec"
    );
    let mut jwt = grant_form(Grant::ClientCredentials, "r", None);
    client_form(&mut jwt, ClientAuth::PrivateKeyJwt, "id", "h.c.s");
    assert!(jwt.body().ends_with(
        "client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=h.c.s"
    ));
    // Debug names the fields only.
    assert!(!format!("{post:?}").contains("sec\""));
    assert!(format!("{post:?}").contains("client_secret"));
}

#[test]
fn code_and_refresh_forms() {
    let form = grant_form(
        Grant::Code {
            code: "c",
            verifier: "v",
            redirect_uri: "http://localhost/cb",
        },
        "r",
        None,
    );
    assert_eq!(
        form.body(),
        "grant_type=authorization_code&code=c&code_verifier=v&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&resource=r"
    );
    let form = grant_form(Grant::Refresh("rt"), "r", Some(""));
    assert_eq!(
        form.body(),
        "grant_type=refresh_token&refresh_token=rt&resource=r"
    );
}

#[test]
fn token_answers() {
    let ok = read_token(
        200,
        br#"{"access_token":"at-1","token_type":"bearer","expires_in":60,"refresh_token":"rt-1"}"#,
    )
    .unwrap();
    assert_eq!(ok.access_token.expose(), "at-1");
    assert_eq!(ok.expires_in, Some(60));
    let shown = format!("{ok:?}");
    assert!(
        !shown.contains("at-1") && !shown.contains("rt-1"),
        "{shown}"
    );
    assert!(matches!(
        read_token(200, br#"{"access_token":"x","token_type":"mac"}"#),
        Err(AuthError::Document { .. })
    ));
    let refused = read_token(
        401,
        br#"{"error":"invalid_client","error_description":"secret s3cr3t wrong"}"#,
    )
    .unwrap_err();
    assert_eq!(
        refused,
        AuthError::TokenRefused {
            status: 401,
            error: Some("invalid_client".into())
        }
    );
    assert!(!refused.to_string().contains("s3cr3t"));
    assert_eq!(
        read_token(500, b"<html>").unwrap_err(),
        AuthError::TokenRefused {
            status: 500,
            error: None
        }
    );
}

#[test]
fn tokens_are_known_secrets_as_soon_as_they_are_read() {
    let body = br#"{"access_token":"at-TOKENTEST-read-1","token_type":"Bearer","refresh_token":"rt-TOKENTEST-read-1"}"#;
    let _token = read_token(200, body).unwrap();
    let shown = crate::text::Secrets::none()
        .redact("a at-TOKENTEST-read-1 b rt-TOKENTEST-read-1")
        .into_owned();
    assert_eq!(shown, "a [redacted] b [redacted]");
}

#[test]
fn a_token_a_header_cannot_carry_is_refused_as_a_document() {
    for bad in [
        r#""a\r\nX-Evil: 1""#,
        r#""tok\u0000en""#,
        r#""tok\u007fen""#,
        r#""tok en""#,
        r#""tok\u00e9n""#,
    ] {
        let body = format!(r#"{{"access_token":{bad},"token_type":"Bearer"}}"#);
        let error = read_token(200, body.as_bytes()).unwrap_err();
        assert!(
            matches!(error, AuthError::Document { .. }),
            "{bad}: {error:?}"
        );
        assert!(error.to_string().contains("header"), "{error}");
    }
}

#[test]
fn every_odd_lifetime_is_read_as_the_docs_say() {
    let cases: &[(&str, Option<u64>)] = &[
        ("60", Some(60)),
        ("\"60\"", Some(60)),
        ("\" 90 \"", Some(90)),
        ("59.9", Some(59)),
        ("\"59.9\"", Some(59)),
        ("0", None),
        ("0.5", None),
        ("-5", None),
        ("-0.5", None),
        ("18446744073709551615", Some(u64::MAX)),
        ("18446744073709551616", None),
        ("1e400", None),
        ("\"soon\"", None),
        ("null", None),
        ("true", None),
        ("[60]", None),
        ("{}", None),
    ];
    for (raw, want) in cases {
        let body = format!(r#"{{"access_token":"t","token_type":"Bearer","expires_in":{raw}}}"#);
        let token = read_token(200, body.as_bytes())
            .unwrap_or_else(|e| panic!("{raw}: the token stays usable, got {e:?}"));
        assert_eq!(token.expires_in, *want, "{raw}");
    }
}

#[test]
fn a_grant_names_its_kind_only() {
    for grant in [
        Grant::Refresh("rt-DEBUG-planted"),
        Grant::Code {
            code: "code-DEBUG-planted",
            verifier: "ver-DEBUG-planted",
            redirect_uri: "http://l/cb",
        },
    ] {
        let shown = format!("{grant:?}");
        assert!(!shown.contains("planted"), "{shown}");
    }
}

#[test]
fn a_jwt_bearer_grant_carries_the_assertion_and_hides_it_in_debug() {
    let form = grant_form(
        Grant::JwtBearer("aGVhZA.Ym9keQ.c2ln"),
        "https://mcp.example/mcp",
        Some("a b"),
    );
    assert_eq!(
        form.body(),
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=aGVhZA.Ym9keQ.c2ln\
         &resource=https%3A%2F%2Fmcp.example%2Fmcp&scope=a+b"
    );
    assert_eq!(
        format!("{:?}", Grant::JwtBearer("aGVhZA.Ym9keQ.c2ln")),
        "JwtBearer"
    );
    assert!(!format!("{form:?}").contains("Ym9keQ"));
}

#[test]
fn a_dpop_token_is_taken_only_after_a_proof() {
    let body = br#"{"access_token":"at-dpop-0123456789","token_type":"DPoP","expires_in":60}"#;
    let token = read_token_with(200, body, true).unwrap();
    assert!(token.is_dpop());
    assert!(matches!(
        read_token(200, body),
        Err(AuthError::Document { why, .. }) if why.contains("DPoP")
    ));
    // A server that ignores DPoP issues a bearer token: taken either way.
    let bearer = br#"{"access_token":"at-bearer-0123456789","token_type":"Bearer"}"#;
    assert!(!read_token_with(200, bearer, true).unwrap().is_dpop());
    assert!(read_token_with(200, br#"{"access_token":"a","token_type":"N_A"}"#, true).is_err());
}

#[test]
fn an_id_jag_exchange_names_what_it_asks_for() {
    let form = grant_form(
        Grant::IdJag {
            subject_token: "aWQ.dG9rZW4.c2ln",
            subject_token_type: SubjectType::IdToken,
            audience: "https://as.example",
        },
        "https://mcp.example/mcp",
        None,
    );
    assert_eq!(
        form.body(),
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange\
         &requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid-jag\
         &subject_token=aWQ.dG9rZW4.c2ln\
         &subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid_token\
         &audience=https%3A%2F%2Fas.example&resource=https%3A%2F%2Fmcp.example%2Fmcp"
    );
    assert!(!format!("{form:?}").contains("dG9rZW4"));
}

#[test]
fn an_id_jag_answer_must_be_one() {
    let ok = br#"{"access_token":"aGVhZA.Ym9keQ.c2ln","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}"#;
    assert_eq!(read_id_jag(200, ok).unwrap().expose(), "aGVhZA.Ym9keQ.c2ln");
    let wrong_type = br#"{"access_token":"aGVhZA.Ym9keQ.c2ln","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}"#;
    assert!(read_id_jag(200, wrong_type).is_err());
    let not_jwt = br#"{"access_token":"opaque","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag"}"#;
    assert!(read_id_jag(200, not_jwt).is_err());
    assert!(matches!(
        read_id_jag(400, br#"{"error":"invalid_grant","error_description":"echo aGVhZA"}"#),
        Err(AuthError::TokenRefused { status: 400, error: Some(e) }) if e == "invalid_grant"
    ));
}
