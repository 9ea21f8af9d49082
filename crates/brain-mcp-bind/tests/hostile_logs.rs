//! The newest output paths against a hostile server and a leaky proxy: `-v`, `RUST_LOG` at
//! every level, trace bodies, proxy credentials and trace context. Both programs run as
//! processes, as an operator runs them, and everything they print is searched: no secret
//! (nor 8 consecutive characters of one) and no character a terminal would act on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

mod support;

use brain_tests::proxy::{ProxyOptions, TestProxy};
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use proptest::prelude::*;
use serde_json::{Value, json};

const CALL: &str = env!("CARGO_BIN_EXE_mcp-call");
const TOOLS: &str = env!("CARGO_BIN_EXE_mcp-tools");

use support::{
    HOSTILE_CHARS, LEVELS, Printed, Spelling, assert_no_piece, assert_terminal_safe, fxhash, run,
    secret, spell, spelling,
};

/// Where a hostile server puts the secret.
#[derive(Clone, Debug)]
struct Reflect {
    secret: String,
    spelling: Spelling,
    /// In `Content-Type: application/json; charset=<secret>` on every reply.
    content_type: bool,
    /// As the `Mcp-Session-Id` (handshake era).
    session_id: bool,
    /// In a JSON-RPC error instead of the result.
    error: bool,
}

impl Reflect {
    fn new(secret: &str) -> Self {
        Self {
            secret: secret.to_owned(),
            spelling: Spelling::Plain,
            content_type: true,
            session_id: true,
            error: false,
        }
    }
}

/// A server of `era` (`Handshake` or `Stateless`) that answers every request itself,
/// reflecting the secret as `reflect` says, with characters a terminal would act on in
/// every text it sends.
fn reflecting(era: Era, reflect: Reflect) -> TestServer {
    let config = ServerConfig::new(era).hook(move |seen| {
        let spelled = spell(&reflect.secret, reflect.spelling);
        // Raw in a JSON string: valid JSON leaves all of these unescaped.
        let text = format!("got {spelled} {HOSTILE_CHARS}");
        let id = seen.id_json();
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
                if reflect.session_id {
                    reply.header("mcp-session-id", &reflect.secret)
                } else {
                    reply.header("mcp-session-id", "sess-plain-1")
                }
            }
            (_, Some("notifications/initialized")) => RawReply::json(202, ""),
            (_, Some("tools/list")) => RawReply::result(
                &id,
                &format!(
                    r#"{{"tools":[{{"name":"echo","description":"{text}","inputSchema":{{"type":"object"}}}}]}}"#
                ),
            ),
            (_, Some("tools/call")) if reflect.error => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"{text}","data":{{"auth":"{spelled}"}}}}}}"#
                );
                RawReply::json(200, body)
            }
            (_, Some("tools/call")) => RawReply::result(
                &id,
                &format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#),
            ),
            _ => return None,
        };
        if reflect.content_type {
            reply.headers.retain(|(name, _)| name != "content-type");
            reply = reply.header(
                "content-type",
                &format!("application/json; charset={}", reflect.secret),
            );
        }
        Some(reply)
    });
    TestServer::start(config)
}

/// A host config with `echo` at `url`, its token in `HOSTILE_TOKEN` (none when `token`
/// is false).
fn host_config(url: &str, name: &str, token: bool) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "brain-hostile-logs-{}-{name}.json",
        std::process::id()
    ));
    let mut binding = json!({
        "name": "echo",
        "description": "echo",
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": "echo",
        "tenants": ["acme"],
    });
    if token {
        binding["token_env"] = json!("HOSTILE_TOKEN");
    }
    let config = json!({ "tools": [binding] });
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Runs `mcp-call` on the `echo` binding at `url` and `mcp-tools -list url`, at `level`,
/// with `token` as the binding's token (none when empty) and `env` besides.
fn both_programs(
    url: &str,
    token: &str,
    level: (&str, Option<&str>),
    env: &[(&str, &str)],
) -> [Printed; 2] {
    let host = host_config(url, &format!("{:x}", fxhash(url, token)), !token.is_empty());
    let (flag, rust_log) = level;
    let mut env: Vec<(&str, &str)> = env.to_vec();
    if !token.is_empty() {
        env.push(("HOSTILE_TOKEN", token));
    }
    if let Some(filter) = rust_log {
        env.push(("RUST_LOG", filter));
    }
    let mut call_args = vec![
        "-config",
        host.to_str().unwrap(),
        "-tool",
        "echo",
        "-tenant",
        "acme",
    ];
    let mut list_args = vec!["-list", url];
    if !token.is_empty() {
        list_args.extend(["-token-env", "HOSTILE_TOKEN"]);
    }
    if !flag.is_empty() {
        call_args.push(flag);
        list_args.push(flag);
    }
    let call = run(CALL, &call_args, &env);
    let list = run(TOOLS, &list_args, &env);
    std::fs::remove_file(host).ok();
    [call, list]
}

#[test]
fn a_token_reflected_in_headers_and_session_ids_is_never_printed() {
    // Symptom 1: `Content-Type: application/json; charset=<token>` and the token as the
    // session id, at -v and RUST_LOG=debug (and trace), in both programs and both eras.
    for token in ["tok-SECRET-reflected-9f3a", "short7"] {
        for era in [Era::Handshake, Era::Stateless] {
            let server = reflecting(era, Reflect::new(token));
            for &level in LEVELS {
                let what = format!("{token} {era:?} {level:?}");
                let [call, list] = both_programs(&server.url(), token, level, &[]);
                assert_eq!(call.code, 0, "{what}: {}", call.stderr);
                assert_eq!(list.code, 0, "{what}: {}", list.stderr);
                for printed in [&call, &list] {
                    assert_no_piece(token, &printed.all(), &what);
                    // No prefix either: a short token is never shown cut.
                    assert!(
                        !printed.stderr.contains("session shor"),
                        "{what}: {}",
                        printed.stderr
                    );
                }
                if level.0 == "-v" {
                    assert!(
                        call.stderr.contains(
                            "tools/call POST -> 200 application/json; charset=[redacted]"
                        ),
                        "{what}: {}",
                        call.stderr
                    );
                    if era == Era::Handshake {
                        assert!(
                            call.stderr.contains("session [redacted] opened"),
                            "{what}: {}",
                            call.stderr
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn escaped_reflections_and_terminal_characters_never_reach_stderr() {
    // Symptoms 2 and 3: the token JSON-escaped in bodies (redacted in tool.result, and now
    // in trace bodies too) and raw U+202E, U+2028, U+200B, U+009B and DEL in valid JSON.
    let token = "tok/SECRET/escaped+7c";
    for spelling in [Spelling::EscapedSlash, Spelling::Unicode, Spelling::Mixed] {
        for error in [false, true] {
            for era in [Era::Handshake, Era::Stateless] {
                let reflect = Reflect {
                    spelling,
                    error,
                    content_type: false,
                    session_id: false,
                    ..Reflect::new(token)
                };
                let server = reflecting(era, reflect);
                let what = format!("{spelling:?} error={error} {era:?}");
                let [call, list] = both_programs(&server.url(), token, ("", Some("trace")), &[]);
                assert!(call.stderr.contains("body="), "{what}: no trace bodies");
                for printed in [&call, &list] {
                    assert_no_piece(token, &printed.all(), &what);
                    assert_terminal_safe(&printed.stderr, &what);
                }
                let result: Value = serde_json::from_str(call.stdout.lines().last().unwrap())
                    .expect("a tool.result line");
                assert!(
                    result.to_string().contains("[redacted]"),
                    "{what}: {result}"
                );
            }
        }
    }
}

#[test]
fn proxy_credentials_echoed_back_are_redacted_everywhere() {
    // Symptom 4: a forwarding proxy passes `Proxy-Authorization` on, and the server behind
    // it echoes the Basic value and the decoded `user:password` into the result, an error
    // and a header.
    let (user, password) = ("proxy-user", "Pr0xy-pass-5ecret");
    for error in [false, true] {
        let server = TestServer::start(ServerConfig::new(Era::Stateless).hook(move |seen| {
            let basic = seen
                .headers
                .get("proxy-authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            let decoded = basic
                .strip_prefix("Basic ")
                .and_then(|b| {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD.decode(b).ok()
                })
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let echo = format!("{basic} | {decoded} | {}", decoded.replace(':', "\\u003a"));
            let id = seen.id_json();
            let reply = match seen.method() {
                Some("server/discover") => RawReply::result(
                    &id,
                    r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#,
                ),
                Some("tools/list") => RawReply::result(
                    &id,
                    &format!(r#"{{"tools":[{{"name":"echo","description":"{echo}","inputSchema":{{"type":"object"}}}}]}}"#),
                ),
                Some("tools/call") if error => RawReply::rpc_error(500, &id, -32000, &echo, None),
                Some("tools/call") => RawReply::result(
                    &id,
                    &format!(r#"{{"content":[{{"type":"text","text":"{echo}"}}]}}"#),
                ),
                _ => return None,
            };
            Some(reply.header("x-echo", &basic))
        }));
        let proxy = TestProxy::start(
            ProxyOptions::default()
                .credentials(user, password)
                .host("mcp.proxied.test", server.addr())
                .leaking_credentials(),
        );
        let url = format!("http://mcp.proxied.test:{}/mcp", server.addr().port());
        let proxy_url = proxy.url_with(user, password);
        for (&level, token) in LEVELS.iter().zip(["tok-bearer-1234567", ""].iter().cycle()) {
            let what = format!("error={error} {level:?} token={token:?}");
            let env = [("HTTP_PROXY", proxy_url.as_str())];
            let [call, list] = both_programs(&url, token, level, &env);
            assert!(
                proxy.seen().iter().any(|s| s.proxy_authorization.is_some()),
                "{what}: the requests went through the proxy"
            );
            for printed in [&call, &list] {
                let all = printed.all();
                assert_no_piece(password, &all, &what);
                assert_no_piece(&format!("{user}:{password}"), &all, &what);
                use base64::Engine as _;
                let basic =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                assert_no_piece(&basic, &all, &what);
            }
            assert!(
                call.stdout.contains("[redacted]"),
                "{what}: {}",
                call.stdout
            );
        }
    }
}

#[test]
fn a_later_traceparent_reaches_the_server_as_version_00() {
    // Symptom 8: a later version's traceparent, with 100 KB appended, is re-emitted as 00.
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let host = host_config(&server.url(), "traceparent", true);
    let ids = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let later = format!("cc-{ids}-{}", "x".repeat(100_000));
    let printed = run(
        CALL,
        &[
            "-config",
            host.to_str().unwrap(),
            "-tool",
            "echo",
            "-tenant",
            "acme",
            "-traceparent",
            &later,
            "-args",
            r#"{"text":"hi"}"#,
        ],
        &[("HOSTILE_TOKEN", "tok-tp-1")],
    );
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    let stats = server.stats();
    let sent = stats.with_method("tools/call").next().expect("the call");
    assert_eq!(
        sent.body["params"]["_meta"]["traceparent"],
        format!("00-{ids}"),
        "{:?}",
        sent.body["params"]["_meta"]
    );
    std::fs::remove_file(host).ok();
}

#[test]
fn localhost_names_skip_the_proxy_and_resolve_to_loopback_in_the_client() {
    // Symptom 7: with a proxy set, `http://mcp.localhost:PORT` is not proxied, and its
    // address does not come from the system resolver (which knows no such name here): the
    // client resolves it to loopback itself.
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let proxy = TestProxy::start(ProxyOptions::default());
    let url = format!("http://mcp.localhost:{}/mcp", server.addr().port());
    let host = host_config(&url, "localhost", true);
    let printed = run(
        CALL,
        &[
            "-config",
            host.to_str().unwrap(),
            "-tool",
            "echo",
            "-tenant",
            "acme",
            "-args",
            r#"{"text":"hi"}"#,
        ],
        &[
            ("HOSTILE_TOKEN", "tok-local-1"),
            ("HTTP_PROXY", &proxy.url()),
        ],
    );
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
    assert_eq!(server.stats().count("tools/call"), 1);
    std::fs::remove_file(host).ok();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// For random secrets and random replies that embed them in headers, body spellings
    /// and errors, no output of either program at any level holds 8 consecutive
    /// characters of the secret.
    #[test]
    fn no_output_holds_a_piece_of_the_secret(
        secret in secret(),
        spelling in spelling(),
        content_type in any::<bool>(),
        session_id in any::<bool>(),
        error in any::<bool>(),
        stateless in any::<bool>(),
        level in 0..LEVELS.len(),
    ) {
        // Header values must be visible ASCII; the secret is.
        let era = if stateless { Era::Stateless } else { Era::Handshake };
        let reflect = Reflect { secret: secret.clone(), spelling, content_type, session_id, error };
        let server = reflecting(era, reflect);
        let printed = both_programs(&server.url(), &secret, LEVELS[level], &[]);
        for p in &printed {
            assert_no_piece(&secret, &p.all(), &format!("{era:?} {:?}", LEVELS[level]));
            assert_terminal_safe(&p.stderr, "stderr");
        }
    }
}
