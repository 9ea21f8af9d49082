//! The two programs against a client credentials server, with nothing but the secret
//! in the environment: `mcp-tools` names the issuer it found without sending the secret,
//! then, pinned to it, prints bindings whose `oauth` block names it, and `mcp-call` runs
//! them; `-v` shows the exchanges and no secret.
//!
//! The secret is `CARGO_PKG_NAME`'s value, set by cargo for the test process.

use brain_mcp_bind::cmd::call::main as mcp_call;
use brain_mcp_bind::cmd::tools::main as mcp_tools;
use brain_tests::auth::{AuthConfig, TestAuthServer};
use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::{Value, json};

const CLIENT: &str = "brain-host";
const SECRET: &str = env!("CARGO_PKG_NAME");

fn run(
    program: fn(&[String], &mut dyn std::io::Write, &mut dyn std::io::Write) -> i32,
    args: &[&str],
) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = program(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

fn call(args: &[String], out: &mut dyn std::io::Write, err: &mut dyn std::io::Write) -> i32 {
    let mut buffer = Vec::new();
    let code = mcp_call(args, &mut buffer, err);
    let _ = out.write_all(&buffer);
    code
}

#[test]
fn mcp_tools_then_mcp_call_with_client_credentials() {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, SECRET));
    let server = TestServer::start(ServerConfig::new(Era::Both).hook(auth.guard()));
    auth.configure(|c| c.resource = server.url());
    let url = server.url();
    // Without -oauth-issuer nothing secret leaves: the issuer found is named, to pin.
    let (code, out, err) = run(
        mcp_tools,
        &[
            "-url",
            &url,
            "-tenant",
            "t",
            "-tools",
            "echo",
            "-oauth-client-id",
            CLIENT,
            "-oauth-secret-env",
            "CARGO_PKG_NAME",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains(&auth.url()) && err.contains("-oauth-issuer"),
        "{err}"
    );
    assert!(auth.token_requests().is_empty(), "the secret stayed home");
    let issuer = auth.url();
    let (code, out, err) = run(
        mcp_tools,
        &[
            "-url",
            &url,
            "-tenant",
            "t",
            "-tools",
            "echo",
            "-oauth-client-id",
            CLIENT,
            "-oauth-secret-env",
            "CARGO_PKG_NAME",
            "-oauth-issuer",
            &issuer,
            "-v",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let bindings: Value = serde_json::from_str(&out).expect("JSON bindings");
    assert_eq!(
        bindings[0]["oauth"],
        json!({"issuer": auth.url(), "client_id": CLIENT, "client_secret_env": "CARGO_PKG_NAME"})
    );
    assert!(bindings[0].get("token_env").is_none());
    assert!(err.contains("POST"), "-v shows the exchanges: {err}");
    for secret in [SECRET.to_owned()].into_iter().chain(auth.issued()) {
        assert!(
            !err.contains(&secret) && !out.contains(&secret),
            "{secret} leaked"
        );
    }
    // The printed bindings, copied into a config, run with mcp-call.
    let path = std::env::temp_dir().join(format!("brain-e2e-oauth-{}.json", std::process::id()));
    std::fs::write(&path, json!({"tools": bindings}).to_string()).expect("write config");
    let path_text = path.display().to_string();
    let (code, out, err) = run(
        call,
        &[
            "-config",
            &path_text,
            "-tenant",
            "t",
            "-tool",
            "echo",
            "-args",
            r#"{"text":"hi"}"#,
            "-v",
        ],
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    let result: Value =
        serde_json::from_str(out.lines().last().unwrap_or("")).expect("a result line");
    assert_eq!(result["is_error"], false, "{result}");
    for secret in [SECRET.to_owned()].into_iter().chain(auth.issued()) {
        assert!(
            !err.contains(&secret) && !out.contains(&secret),
            "{secret} leaked"
        );
    }
    // Flags that cannot work are refused before anything is sent.
    let before = auth.seen().len();
    for bad in [
        vec!["-oauth-client-id", CLIENT],
        vec!["-oauth-secret-env", "CARGO_PKG_NAME"],
        vec![
            "-oauth-client-id",
            CLIENT,
            "-oauth-secret-env",
            "BRAIN_SURELY_UNSET_VAR_9",
        ],
        vec![
            "-oauth-client-id",
            CLIENT,
            "-oauth-secret-env",
            "CARGO_PKG_NAME",
            "-token-env",
            "CARGO_PKG_NAME",
        ],
    ] {
        let args = [
            &["-url", url.as_str(), "-tenant", "t", "-tools", "echo"][..],
            &bad[..],
        ]
        .concat();
        let (code, _, err) = run(mcp_tools, &args);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    assert_eq!(auth.seen().len(), before);
}

#[test]
fn mcp_tools_with_a_workload_token_file_writes_the_block_and_never_the_jwt() {
    let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJtY3AtdG9vbHMtd29ya2xvYWQifQ.cHJvZ3JhbS1zaWduYXR1cmUtMDEyMw";
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, "unused"));
    auth.configure(|c| {
        c.auth_methods = vec!["none".into()];
        c.assertions = vec![jwt.to_owned()];
    });
    let server = TestServer::start(ServerConfig::new(Era::Both).hook(auth.guard()));
    auth.configure(|c| c.resource = server.url());
    let path = std::env::temp_dir().join(format!("brain-mcp-tools-{}.jwt", std::process::id()));
    std::fs::write(&path, format!("{jwt}\n")).expect("the token file is written");
    let file = path.to_string_lossy().into_owned();
    let (code, out, err) = run(
        mcp_tools,
        &[
            "-url",
            &server.url(),
            "-tenant",
            "t",
            "-tools",
            "echo",
            "-oauth-client-id",
            CLIENT,
            "-oauth-workload-token-file",
            &file,
            "-oauth-issuer",
            &auth.url(),
            "-v",
        ],
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    let bindings: Value = serde_json::from_str(&out).expect("JSON bindings");
    assert_eq!(
        bindings[0]["oauth"],
        json!({"issuer": auth.url(), "client_id": CLIENT, "workload_token_file": file})
    );
    let request = &auth.token_requests()[0];
    assert_eq!(request.form("assertion").as_deref(), Some(jwt));
    for piece in jwt.split('.').skip(1).chain([jwt]) {
        assert!(
            !err.contains(piece) && !out.contains(piece),
            "{piece} leaked"
        );
    }
    // A relative path is refused before anything is sent.
    let (code, _, err) = run(
        mcp_tools,
        &[
            "-url",
            &server.url(),
            "-tenant",
            "t",
            "-tools",
            "echo",
            "-oauth-client-id",
            CLIENT,
            "-oauth-workload-token-file",
            "token.jwt",
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("absolute"), "{err}");
}
