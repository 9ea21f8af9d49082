//! Workload identity federation end to end: a binding's `oauth` block names a file the
//! platform rotates; its JWT is presented as a JWT bearer grant at the pinned issuer only,
//! read afresh for each token, and never shown.

use brain_tests::auth::{AuthConfig, TestAuthServer};
use brain_tests::server::{Era, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Harness, assert_failure, binding, call, spec};

const CLIENT: &str = "brain-workload";

/// A made-up compact JWT, different for each `n`, that looks like a credential.
fn workload_jwt(n: u32) -> String {
    format!(
        "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZC0{n}In0Q.c2lnbmF0dXJlLW9mLXdvcmtsb2FkLXRva2VuLX{n}Yz"
    )
}

/// A file of this test's own under the system's temporary directory.
struct TokenFile(std::path::PathBuf);

impl TokenFile {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("brain-workload-{}-{name}.jwt", std::process::id()));
        Self(path)
    }

    fn write(&self, text: &str) {
        std::fs::write(&self.0, text).expect("the token file is written");
    }

    fn path(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn servers() -> (TestAuthServer, TestServer) {
    let (auth, server) = TestAuthServer::guarding(Era::Handshake, CLIENT, "unused-secret");
    auth.configure(|c| c.auth_methods = vec!["none".into()]);
    (auth, server)
}

fn workload_spec(server: &TestServer, issuer: &str, file: &TokenFile) -> Value {
    let mut spec = spec("echo", &server.url(), "echo");
    spec["oauth"] = json!({
        "issuer": issuer,
        "client_id": CLIENT,
        "workload_token_file": file.path(),
    });
    spec
}

/// Every piece of `jwt` long enough to mean something, to look for in printed text.
fn pieces(jwt: &str) -> Vec<String> {
    let mut out = vec![jwt.to_owned()];
    out.extend(jwt.split('.').filter(|p| p.len() >= 16).map(str::to_owned));
    out
}

#[tokio::test]
async fn a_rotated_workload_token_file_is_read_afresh_for_each_token() {
    let (auth, server) = servers();
    let file = TokenFile::new("rotated");
    file.write(&format!("{}\n", workload_jwt(1)));
    auth.configure(|c| c.assertions = vec![workload_jwt(1), workload_jwt(2)]);
    let echo = binding(workload_spec(&server, &auth.url(), &file));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "one"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    // The platform rotates the token; the server forgets the access token it granted.
    file.write(&workload_jwt(2));
    auth.revoke_all();
    let out = call(&h, &echo, "c2", json!({"text": "two"})).await;
    assert_eq!(out.result["is_error"], false, "{}", out.result);
    let requests = auth.token_requests();
    assert_eq!(requests.len(), 2);
    for (request, n) in requests.iter().zip([1, 2]) {
        assert_eq!(
            request.form("grant_type").as_deref(),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
        );
        assert_eq!(
            request.form("assertion"),
            Some(workload_jwt(n)),
            "read afresh"
        );
        assert_eq!(request.form("client_id").as_deref(), Some(CLIENT));
        assert_eq!(request.form("resource"), Some(server.url()));
        assert!(request.form("client_secret").is_none());
        assert!(request.authorization.is_none());
    }
    // The MCP server saw access tokens only, never the workload's JWT.
    for r in &server.stats().received {
        for piece in pieces(&workload_jwt(1))
            .iter()
            .chain(&pieces(&workload_jwt(2)))
        {
            assert!(!r.raw_body.contains(piece.as_str()));
            assert!(
                !r.authorization
                    .as_deref()
                    .unwrap_or("")
                    .contains(piece.as_str())
            );
        }
    }
    h.flush().await;
}

#[tokio::test]
async fn a_workload_token_goes_to_no_issuer_but_the_pinned_one() {
    let (auth, server) = servers();
    let thief = TestAuthServer::start(AuthConfig::new(&server.url(), CLIENT, "x"));
    auth.configure(|c| c.listed_issuer = Some(thief.url()));
    let file = TokenFile::new("pinned");
    file.write(&workload_jwt(3));
    let echo = binding(workload_spec(&server, &auth.url(), &file));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(
        message.contains("does not name the configured issuer"),
        "{message}"
    );
    assert!(thief.seen().is_empty(), "nothing went to the other server");
    assert!(auth.token_requests().is_empty());
}

#[tokio::test]
async fn a_refused_workload_token_is_never_printed_nor_retried() {
    let (auth, server) = servers();
    // The token endpoint refuses, echoing the form it got (the assertion) back.
    auth.configure(|c| c.refuse_tokens = true);
    let file = TokenFile::new("refused");
    file.write(&workload_jwt(4));
    let echo = binding(workload_spec(&server, &auth.url(), &file));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains("401 (invalid_client)"), "{message}");
    let printed = out.result.to_string();
    for piece in pieces(&workload_jwt(4)) {
        assert!(!printed.contains(&piece), "leaked {piece}: {printed}");
    }
    let again = call(&h, &echo, "c2", json!({"text": "hi"})).await;
    assert_failure(&again.result, "authorization_failed", false);
    assert_eq!(
        auth.token_requests().len(),
        1,
        "a refused JWT bearer grant is not retried at once"
    );
    assert_eq!(server.stats().count("tools/call"), 0);
}

#[tokio::test]
async fn a_workload_file_without_a_jwt_fails_naming_the_file_not_its_text() {
    let (auth, server) = servers();
    let file = TokenFile::new("malformed");
    file.write("not-a-jwt-but-a-secret-anyway-0123456789");
    let echo = binding(workload_spec(&server, &auth.url(), &file));
    let h = Harness::new();
    let out = call(&h, &echo, "c1", json!({"text": "hi"})).await;
    let message = assert_failure(&out.result, "authorization_failed", false);
    assert!(message.contains(&file.path()), "{message}");
    assert!(message.contains("compact JWT"), "{message}");
    assert!(
        !out.result.to_string().contains("secret-anyway"),
        "{}",
        out.result
    );
    assert!(auth.token_requests().is_empty(), "nothing was sent");
}
