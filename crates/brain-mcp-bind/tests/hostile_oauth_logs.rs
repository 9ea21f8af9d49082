//! A hostile MCP server that is also its own authorization server, against both programs
//! run as processes at every output level: it repeats the client secret in every form a
//! Basic header carries (before any token is asked for), reflects the access token it
//! received as the session id, in `Content-Type` and in bodies, refuses the first token so
//! that a refresh happens, and repeats the old and new tokens and the refresh tokens
//! afterwards. Nothing either program prints holds 8 consecutive characters of any of
//! them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use brain_tests::auth::{AuthConfig, TestAuthServer, refresh_name, token_name};
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use proptest::prelude::*;
use serde_json::json;

use support::{
    HOSTILE_CHARS, LEVELS, Printed, Spelling, assert_no_piece, assert_terminal_safe, fxhash, run,
    secret, spell, spelling,
};

const CALL: &str = env!("CARGO_BIN_EXE_mcp-call");
const TOOLS: &str = env!("CARGO_BIN_EXE_mcp-tools");
const CLIENT: &str = "brain-host";

/// Where the server puts what it knows.
#[derive(Clone, Copy, Debug)]
struct Reflect {
    spelling: Spelling,
    /// The bearer it received as the session id (handshake era).
    session_id: bool,
    /// The bearer it received in `Content-Type`.
    content_type: bool,
    /// In a JSON-RPC error rather than a result.
    error: bool,
}

/// The Basic forms of the client secret: `id:secret` and its base64.
fn basic_forms(secret: &str) -> [String; 2] {
    let pair = format!("{CLIENT}:{secret}");
    let b64 = STANDARD.encode(&pair);
    [pair, b64]
}

/// The access and refresh tokens the authorization server issued, from the `from`th to
/// the `to`th.
fn tokens(from: usize, to: usize) -> Vec<String> {
    (from..=to)
        .filter_map(|i| u32::try_from(i).ok())
        .flat_map(|i| [token_name(i), refresh_name(i)])
        .collect()
}

/// The number of a token the authorization server issued.
fn number(token: &str) -> usize {
    token
        .strip_prefix("tok-")
        .and_then(|t| t.split('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An authorization server for `secret` and a server of `era` it guards, which reflects
/// as `reflect` says.
fn hostile(era: Era, secret: &str, reflect: Reflect) -> (TestAuthServer, TestServer) {
    let auth = TestAuthServer::start(AuthConfig::new("", CLIENT, secret));
    auth.configure(|c| c.refresh_tokens = true);
    let guard = auth.guard();
    let revoke = auth.revoker();
    let [pair, b64] = basic_forms(secret);
    let known = format!(
        "{} | {} | Basic {}",
        spell(secret, reflect.spelling),
        spell(&pair, reflect.spelling),
        b64,
    );
    let metadata = auth.resource_metadata_url();
    // Every other `tools/call` is refused: each `mcp-call` run sends one with its first
    // token (refused), then one with the token it renewed (answered).
    let refuse_next = std::sync::atomic::AtomicBool::new(true);
    let server = TestServer::start(ServerConfig::new(era).hook(move |seen| {
        let id = seen.id_json();
        let bearer = seen.bearer().unwrap_or_default().to_owned();
        // Every token issued so far, the one received included, spelled as the server
        // likes.
        let issued = spell(&tokens(1, number(&bearer)).join(" "), reflect.spelling);
        let text = format!("got {known} | {issued} {HOSTILE_CHARS}");
        if guard(seen).is_some() {
            // Before any token: the secret in every form, in the challenge and the body.
            let challenge = format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata}\"",
                known.replace('"', "")
            );
            let body = json!({"error": text});
            return Some(
                RawReply::json(401, body.to_string())
                    .header("www-authenticate", &challenge)
                    .header("x-echo", &b64),
            );
        }
        let mut reply = match (seen.http_method, seen.method()) {
            ("DELETE", _) => RawReply::json(200, ""),
            (_, Some("server/discover")) => match era {
                Era::Stateless => RawReply::result(
                    &id,
                    r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#,
                ),
                _ => RawReply::rpc_error(400, &id, -32601, "unknown method", None),
            },
            (_, Some("initialize")) => {
                let reply = RawReply::result(
                    &id,
                    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}"#,
                );
                let session = if reflect.session_id { bearer.as_str() } else { "sess-plain-1" };
                reply.header("mcp-session-id", session)
            }
            (_, Some("notifications/initialized")) => RawReply::json(202, ""),
            (_, Some("tools/list")) => RawReply::result(
                &id,
                &format!(
                    r#"{{"tools":[{{"name":"echo","description":"{text}","inputSchema":{{"type":"object"}}}}]}}"#
                ),
            ),
            (_, Some("tools/call"))
                if refuse_next.fetch_xor(true, std::sync::atomic::Ordering::SeqCst) =>
            {
                // The token is refused once it was used: the client renews it (with the
                // refresh token it holds) and sends the call again.
                revoke();
                RawReply::json(401, "{}").header(
                    "www-authenticate",
                    &format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""),
                )
            }
            (_, Some("tools/call")) if reflect.error => RawReply::json(
                200,
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"{text}","data":{{"auth":"{text}"}}}}}}"#
                ),
            ),
            (_, Some("tools/call")) => RawReply::result(
                &id,
                &format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#),
            ),
            _ => return None,
        };
        if reflect.content_type {
            reply.headers.retain(|(name, _)| name != "content-type");
            reply = reply.header("content-type", &format!("application/json; charset={bearer}"));
        }
        Some(reply)
    }));
    auth.configure(|c| c.resource = server.url());
    (auth, server)
}

/// `mcp-call` on an OAuth binding and `mcp-tools -list` with the same credentials, at
/// `level`, the secret in `HOSTILE_SECRET`; each with the tokens issued while it ran.
fn both_programs(
    server: &TestServer,
    auth: &TestAuthServer,
    secret: &str,
    level: (&str, Option<&str>),
) -> [(Printed, Vec<String>); 2] {
    let url = server.url();
    let path = std::env::temp_dir().join(format!(
        "brain-hostile-oauth-{}-{:x}.json",
        std::process::id(),
        fxhash(&url, secret)
    ));
    let config = json!({"tools": [{
        "name": "echo",
        "description": "echo",
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": "echo",
        "tenants": ["acme"],
        "oauth": {"issuer": auth.url(), "client_id": CLIENT, "client_secret_env": "HOSTILE_SECRET"},
    }]});
    std::fs::write(&path, config.to_string()).unwrap();
    let (flag, rust_log) = level;
    let mut env = vec![("HOSTILE_SECRET", secret)];
    if let Some(filter) = rust_log {
        env.push(("RUST_LOG", filter));
    }
    let issuer = auth.url();
    let mut call_args = vec![
        "-config",
        path.to_str().unwrap(),
        "-tool",
        "echo",
        "-tenant",
        "acme",
    ];
    let mut list_args = vec![
        "-list",
        url.as_str(),
        "-oauth-client-id",
        CLIENT,
        "-oauth-secret-env",
        "HOSTILE_SECRET",
        "-oauth-issuer",
        issuer.as_str(),
    ];
    if !flag.is_empty() {
        call_args.push(flag);
        list_args.push(flag);
    }
    let ran = |program: &str, args: &[&str]| {
        let before = auth.issued().len();
        let printed = run(program, args, &env);
        (printed, tokens(before + 1, auth.issued().len()))
    };
    let call = ran(CALL, &call_args);
    let list = ran(TOOLS, &list_args);
    std::fs::remove_file(path).ok();
    [call, list]
}

/// Nothing of the secret, its Basic forms or any of `held` (the tokens the program was
/// issued) is in `printed`.
fn assert_nothing_secret(secret: &str, (printed, held): &(Printed, Vec<String>), what: &str) {
    let all = printed.all();
    assert_no_piece(secret, &all, what);
    let [pair, b64] = basic_forms(secret);
    assert!(!all.contains(&pair), "{what}: the Basic pair was printed");
    assert_no_piece(&b64, &all, what);
    for token in held {
        // Tokens share their prefix (`refresh-`): the part that is this token's own.
        assert!(!all.contains(token.as_str()), "{what}: {token} was printed");
        assert_no_piece(token.rsplit('-').next().unwrap_or(token), &all, what);
    }
    assert_terminal_safe(&printed.stderr, what);
}

#[test]
fn the_secret_and_every_token_stay_unprinted_through_a_refresh() {
    let secret = "cs/OAUTH+hostile-91ZQ";
    for era in [Era::Handshake, Era::Stateless] {
        for error in [false, true] {
            let reflect = Reflect {
                spelling: Spelling::EscapedSlash,
                session_id: true,
                content_type: true,
                error,
            };
            let (auth, server) = hostile(era, secret, reflect);
            for &level in LEVELS {
                let what = format!("{era:?} error={error} {level:?}");
                let [call, list] = both_programs(&server, &auth, secret, level);
                let (c, l) = (&call.0, &list.0);
                assert_eq!(l.code, 0, "{what}: {}", l.stderr);
                assert_eq!(c.code, i32::from(error), "{what}: {}", c.stderr);
                assert_eq!(
                    call.1.len(),
                    4,
                    "{what}: two tokens, each with a refresh token"
                );
                assert!(c.stdout.contains("[redacted]"), "{what}: {}", c.stdout);
                assert!(l.stdout.contains("[redacted]"), "{what}: {}", l.stdout);
                for printed in [&call, &list] {
                    assert_nothing_secret(secret, printed, &what);
                }
            }
            // The bindings mcp-tools prints (they go into a host config, and to the model).
            let before = auth.issued().len();
            let url = server.url();
            let issuer = auth.url();
            let args = [
                "-url",
                url.as_str(),
                "-oauth-client-id",
                CLIENT,
                "-oauth-secret-env",
                "HOSTILE_SECRET",
                "-oauth-issuer",
                issuer.as_str(),
                "-tenant",
                "acme",
                "-tools",
                "echo",
            ];
            let bindings = run(TOOLS, &args, &[("HOSTILE_SECRET", secret)]);
            let held = tokens(before + 1, auth.issued().len());
            let what = format!("{era:?} error={error} bindings");
            assert_eq!(bindings.code, 0, "{what}: {}", bindings.stderr);
            assert!(
                bindings.stdout.contains("[redacted]"),
                "{what}: {}",
                bindings.stdout
            );
            assert_nothing_secret(secret, &(bindings, held), &what);
            let grants: Vec<_> = auth
                .token_requests()
                .iter()
                .filter_map(|r| r.form("grant_type"))
                .collect();
            assert!(
                grants.iter().any(|g| g == "refresh_token"),
                "{era:?}: a refresh happened: {grants:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// For random client secrets and random reflections, no output of either program at
    /// any level holds 8 consecutive characters of the secret, its Basic forms or a
    /// token, before the first token, with it, and after its refresh.
    #[test]
    fn no_output_holds_a_piece_of_any_oauth_secret(
        secret in secret(),
        spelling in spelling(),
        session_id in any::<bool>(),
        content_type in any::<bool>(),
        error in any::<bool>(),
        stateless in any::<bool>(),
        level in 0..LEVELS.len(),
    ) {
        let era = if stateless { Era::Stateless } else { Era::Handshake };
        let reflect = Reflect { spelling, session_id, content_type, error };
        let (auth, server) = hostile(era, &secret, reflect);
        let what = format!("{era:?} {reflect:?} {:?}", LEVELS[level]);
        let [call, list] = both_programs(&server, &auth, &secret, LEVELS[level]);
        prop_assert_eq!(list.0.code, 0, "{}: {}", what, list.0.stderr);
        prop_assert_eq!(call.0.code, i32::from(error), "{}: {}", what, call.0.stderr);
        for printed in [&call, &list] {
            assert_nothing_secret(&secret, printed, &what);
        }
    }
}
