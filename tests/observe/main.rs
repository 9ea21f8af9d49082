//! What a call tells the operator through `tracing` (docs/observability.md): span and
//! field names, exchange events, trace context in `_meta`, and the token never at any
//! level, even at `trace` with a server that reflects it; nor any OAuth secret.
//!
//! One test in a binary of its own, under one global subscriber: `tracing` caches each
//! callsite's interest process-wide, so subscribers that come and go on other test
//! threads could hide events from a scoped one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failed expectation is a failed test

mod seen;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use brain_mcp_bind::{McpClient, McpExecutor};
use brain_tests::server::{Era, RawReply, ServerConfig, TestServer};
use brain_tools_core::{HostConfig, NoProgress, Secret, ToolCall, TraceContext, run_call_with};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing_subscriber::layer::{Layer, SubscriberExt};

use seen::{Fields, Seen, SharedWriter};

const TENANT: &str = "tenant-a";
const TOKEN: &str = "tok-9f1c-observability-secret";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// What the global subscriber saw, and the text its `trace`-level formatter wrote.
struct Capture {
    seen: Seen,
    printed: Arc<Mutex<Vec<u8>>>,
}

impl Capture {
    fn install() -> Self {
        let seen = Seen::default();
        let printed = Arc::new(Mutex::new(Vec::new()));
        let writer = printed.clone();
        let subscriber = tracing_subscriber::registry().with(seen.clone()).with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || SharedWriter(writer.clone()))
                .with_filter(tracing_subscriber::filter::LevelFilter::TRACE),
        );
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        Self { seen, printed }
    }

    fn clear(&self) {
        self.seen.clear();
        self.printed.lock().expect("printed").clear();
    }

    fn printed(&self) -> String {
        String::from_utf8_lossy(&self.printed.lock().expect("printed")).into_owned()
    }
}

/// One call of `echo` with the token and a trace context.
async fn traced_call(server: &TestServer, text: &str) -> Value {
    traced_call_of(server, "echo", text).await
}

/// One call of the binding `echo`, bound to the server's tool `tool`.
async fn traced_call_of(server: &TestServer, tool: &str, text: &str) -> Value {
    let client = McpClient::new().expect("client");
    let executor = McpExecutor::new(client.clone());
    let config = HostConfig::from_value(&json!({"tools": [{
        "name": "echo",
        "description": "echo",
        "input_schema": {"type": "object"},
        "url": server.url(),
        "mcp_tool": tool,
        "token_env": "OBS_TOKEN",
        "tenants": [TENANT],
    }]}))
    .expect("config");
    let echo = config.get("echo").expect("binding");
    let trace = TraceContext::from_traceparent(TRACEPARENT)
        .and_then(|t| t.with_tracestate("brain=1"))
        .expect("valid context");
    let call =
        ToolCall::new(TENANT, "session-obs", "obs-1", json!({"text": text})).with_trace(trace);
    let lookup = |_: &str| Ok(Secret::new(TOKEN.to_owned()));
    let result = run_call_with(
        echo,
        call,
        &executor,
        &NoProgress,
        &CancellationToken::new(),
        &lookup,
    )
    .await;
    assert!(client.flush(std::time::Duration::from_secs(10)).await);
    serde_json::to_value(&result).expect("JSON")
}

#[test]
fn spans_events_trace_context_and_no_token_at_any_level() {
    let capture = Capture::install();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        a_call_has_its_span_its_exchanges_and_its_outcome(&capture).await;
        capture.clear();
        mcp_operations_have_opentelemetry_names(&capture).await;
        capture.clear();
        failed_operations_say_how(&capture).await;
        capture.clear();
        the_token_never_appears_even_at_trace(&capture).await;
        capture.clear();
        oauth_secrets_never_appear_even_at_trace(&capture).await;
    });
}

async fn a_call_has_its_span_its_exchanges_and_its_outcome(capture: &Capture) {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        capture.clear();
        let result = traced_call(&server, "hello").await;
        let seen = &capture.seen;
        assert_eq!(result["is_error"], false, "{result}");
        let calls = seen.spans_named("tool_call");
        assert_eq!(calls.len(), 1, "{era:?}");
        let call = &calls[0];
        for (field, value) in [
            ("otel.name", "execute_tool echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", "echo"),
            ("tenant", TENANT),
            ("gen_ai.tool.call.id", "obs-1"),
            ("gen_ai.conversation.id", "session-obs"),
            ("remote_tool", "echo"),
            ("is_error", "false"),
            ("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"),
        ] {
            assert_eq!(
                call.get(field).map(String::as_str),
                Some(value),
                "{era:?} {field}: {call:?}"
            );
        }
        let origin = server.url().trim_end_matches("/mcp").to_owned();
        assert_eq!(call.get("server"), Some(&origin), "{call:?}");
        for field in ["era", "exchanges", "bytes_in", "duration_ms"] {
            assert!(call.contains_key(field), "{era:?} {field}: {call:?}");
        }
        assert!(!call.contains_key("error.type"), "{call:?}");
        let methods: Vec<String> = seen
            .spans_named("mcp_exchange")
            .into_iter()
            .filter_map(|f| f.get("method").cloned())
            .collect();
        assert!(methods.contains(&"tools/call".to_owned()), "{methods:?}");
        let exchanges = seen.events_with("brain::exchange");
        let ok: Vec<_> = exchanges
            .iter()
            .filter(|e| e.get("message").is_some_and(|m| m == "exchange"))
            .collect();
        assert!(
            ok.iter()
                .all(|e| e.contains_key("status") && e.contains_key("duration_ms")),
            "{ok:?}"
        );
        if era == Era::Handshake {
            assert_eq!(call.get("era").map(String::as_str), Some("handshake"));
            assert!(methods.contains(&"initialize".to_owned()), "{methods:?}");
            assert!(methods.contains(&"end session".to_owned()), "{methods:?}");
            let mcp = seen.events_with("brain::mcp");
            let said = |m: &str| mcp.iter().any(|e| e.get("message").is_some_and(|x| x == m));
            assert!(said("session opened") && said("session closed"), "{mcp:?}");
            // The session's id, shortened, on its events and its exchanges' spans.
            let said_id = |m: &str| {
                mcp.iter()
                    .find(|e| e.get("message").is_some_and(|x| x == m))
            };
            let opened = said_id("session opened").and_then(|e| e.get("mcp.session.id"));
            let opened = opened
                .filter(|id| !id.is_empty())
                .expect("the session's id");
            let closed = said_id("session closed").and_then(|e| e.get("mcp.session.id"));
            assert_eq!(closed, Some(opened), "{mcp:?}");
            let exchanges = seen.spans_named("mcp_exchange");
            for method in ["tools/call", "end session"] {
                let span = exchanges
                    .iter()
                    .find(|f| f.get("method").is_some_and(|m| m == method));
                let id = span.and_then(|f| f.get("mcp.session.id"));
                assert_eq!(id, Some(opened), "{method}: {exchanges:?}");
            }
        } else {
            assert_eq!(call.get("era").map(String::as_str), Some("2026-07-28"));
        }
        let ended = seen.events_with("brain_tools_core::observe");
        assert!(
            ended
                .iter()
                .any(|e| e.get("message").is_some_and(|m| m == "tool call ended")),
            "{ended:?}"
        );
        // The trace context reached the server in the request's _meta.
        let stats = server.stats();
        let sent = stats.with_method("tools/call").next().expect("the call");
        assert_eq!(
            sent.body["params"]["_meta"]["traceparent"], TRACEPARENT,
            "{era:?}"
        );
        assert_eq!(
            sent.body["params"]["_meta"]["tracestate"], "brain=1",
            "{era:?}"
        );
    }
}

/// The `mcp_operation` spans of the last call, by their OpenTelemetry name.
fn operations(seen: &Seen) -> BTreeMap<String, Fields> {
    seen.spans_named("mcp_operation")
        .into_iter()
        .map(|f| (f.get("otel.name").cloned().unwrap_or_default(), f))
        .collect()
}

async fn mcp_operations_have_opentelemetry_names(capture: &Capture) {
    for era in [Era::Handshake, Era::Stateless] {
        let server = TestServer::start(ServerConfig::new(era));
        capture.clear();
        let result = traced_call(&server, "hello").await;
        assert_eq!(result["is_error"], false, "{result}");
        let ops = operations(&capture.seen);
        let port = server.addr().port().to_string();
        let call = ops
            .get("tools/call echo")
            .unwrap_or_else(|| panic!("{era:?}: {ops:?}"));
        for (field, value) in [
            ("otel.kind", "client"),
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("network.transport", "tcp"),
            ("network.protocol.name", "http"),
            ("server.address", "127.0.0.1"),
            ("server.port", port.as_str()),
        ] {
            assert_eq!(
                call.get(field).map(String::as_str),
                Some(value),
                "{era:?} {field}: {call:?}"
            );
        }
        assert!(call.contains_key("jsonrpc.request.id"), "{call:?}");
        assert!(!call.contains_key("error.type"), "{call:?}");
        let version = call.get("mcp.protocol.version").map(String::as_str);
        let discover = ops
            .get("server/discover")
            .unwrap_or_else(|| panic!("{ops:?}"));
        assert_eq!(
            discover.get("mcp.method.name").map(String::as_str),
            Some("server/discover")
        );
        if era == Era::Handshake {
            assert!(version.is_some_and(|v| v.starts_with("2025-")), "{call:?}");
            assert!(call.contains_key("mcp.session.id"), "{call:?}");
            // A handshake-era server refuses the 2026 probe: that operation failed.
            assert!(discover.contains_key("error.type"), "{discover:?}");
            assert!(ops.contains_key("initialize"), "{ops:?}");
            let initialized = ops
                .get("notifications/initialized")
                .unwrap_or_else(|| panic!("{ops:?}"));
            assert!(
                !initialized.contains_key("jsonrpc.request.id"),
                "a notification has no id"
            );
        } else {
            assert_eq!(version, Some("2026-07-28"), "{call:?}");
            assert!(!call.contains_key("mcp.session.id"), "{call:?}");
            assert!(!discover.contains_key("error.type"), "{discover:?}");
            assert!(!ops.contains_key("initialize"), "{ops:?}");
        }
    }
}

async fn failed_operations_say_how(capture: &Capture) {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    // A tool's own error: `tool_error` on both spans.
    let result = traced_call_of(&server, "fail", "x").await;
    assert_eq!(result["is_error"], true, "{result}");
    let ops = operations(&capture.seen);
    let op = ops
        .get("tools/call fail")
        .unwrap_or_else(|| panic!("{ops:?}"));
    assert_eq!(
        op.get("error.type").map(String::as_str),
        Some("tool_error"),
        "{op:?}"
    );
    assert_eq!(
        op.get("otel.status_code").map(String::as_str),
        Some("error"),
        "{op:?}"
    );
    let call = &capture.seen.spans_named("tool_call")[0];
    assert_eq!(
        call.get("error.type").map(String::as_str),
        Some("tool_error"),
        "{call:?}"
    );
    capture.clear();
    // A JSON-RPC error: its code, and the server's message as the status description.
    let result = traced_call_of(&server, "no-such-tool", "x").await;
    assert_eq!(result["is_error"], true, "{result}");
    let ops = operations(&capture.seen);
    let op = ops
        .get("tools/call no-such-tool")
        .unwrap_or_else(|| panic!("{ops:?}"));
    assert_eq!(
        op.get("error.type").map(String::as_str),
        Some("-32602"),
        "{op:?}"
    );
    assert_eq!(
        op.get("rpc.response.status_code").map(String::as_str),
        Some("-32602"),
        "{op:?}"
    );
    assert!(
        op.get("otel.status_description")
            .is_some_and(|d| !d.is_empty()),
        "{op:?}"
    );
    let call = &capture.seen.spans_named("tool_call")[0];
    assert_eq!(
        call.get("error.type").map(String::as_str),
        Some("rpc_error"),
        "{call:?}"
    );
    assert_eq!(
        call.get("otel.status_code").map(String::as_str),
        Some("error"),
        "{call:?}"
    );
}

async fn the_token_never_appears_even_at_trace(capture: &Capture) {
    // The server echoes the Authorization header back in a result, and the argument holds
    // the token too: trace-level bodies must show neither.
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(|seen| {
        (seen.method() == Some("tools/call")).then(|| {
            let auth = seen.bearer().unwrap_or_default().to_owned();
            let result = format!(r#"{{"content":[{{"type":"text","text":"you sent {auth}"}}]}}"#);
            RawReply::result(&seen.id_json(), &result)
        })
    }));
    let result = traced_call(&server, TOKEN).await;
    let printed = capture.printed();
    assert!(
        printed.contains("tools/call"),
        "trace output was captured: {printed}"
    );
    assert!(printed.contains("body"), "bodies are written at trace");
    assert!(
        !printed.contains(TOKEN),
        "the token leaked into trace output"
    );
    assert!(!result.to_string().contains(TOKEN), "{result}");
}

/// A user who approves at once.
struct Approve(brain_mcp_transport::HttpClient);

#[async_trait::async_trait]
impl brain_mcp_bind::AuthorizationHandler for Approve {
    async fn authorize(
        &self,
        prompt: &brain_mcp_bind::AuthorizationPrompt,
    ) -> Result<String, brain_mcp_bind::Declined> {
        let url = prompt.url.parse().map_err(|_| "not a URL")?;
        let req = brain_mcp_transport::FetchRequest::get(url, std::time::Duration::from_secs(5));
        let answer = self.0.fetch(req).await.map_err(|e| e.to_string())?;
        answer.location.ok_or_else(|| "no redirect".into())
    }
}

struct Fixed(brain_mcp_bind::OAuthClient);

#[async_trait::async_trait]
impl brain_mcp_bind::CredentialSource for Fixed {
    async fn credential(&self, _: &str, _: &str) -> brain_mcp_bind::Credential {
        brain_mcp_bind::Credential::OAuth(self.0.clone())
    }
}

/// Client credentials, then a user's delegation with a refresh, against a server that
/// reflects the access token and an authorization server that echoes what it is sent
/// when it refuses: no client secret, access or refresh token, code or PKCE verifier
/// reaches any output, at `trace`.
async fn oauth_secrets_never_appear_even_at_trace(capture: &Capture) {
    use brain_mcp_bind::{ClientProof, OAuthClient};
    use brain_tests::auth::{AuthConfig, TestAuthServer};
    const CLIENT_SECRET: &str = "cs-7d1e-oauth-client-secret";
    let auth = TestAuthServer::start(AuthConfig::new("", "obs-client", CLIENT_SECRET));
    let guard = auth.guard();
    let server = TestServer::start(ServerConfig::new(Era::Handshake).hook(move |seen| {
        if let Some(refused) = guard(seen) {
            return Some(refused);
        }
        (seen.method() == Some("tools/call")).then(|| {
            let auth = seen.bearer().unwrap_or_default().to_owned();
            let result = format!(r#"{{"content":[{{"type":"text","text":"you sent {auth}"}}]}}"#);
            RawReply::result(&seen.id_json(), &result)
        })
    }));
    auth.configure(|c| {
        c.resource = server.url();
        c.refresh_tokens = true;
    });
    let http = brain_mcp_transport::HttpClient::new(brain_mcp_transport::ClientConfig::default())
        .expect("HTTP client");
    let machine = OAuthClient::pinned(
        auth.url(),
        "obs-client",
        ClientProof::Secret(Secret::new(CLIENT_SECRET)),
    );
    let user = OAuthClient::delegated(Arc::new(Approve(http)), "http://localhost:1/cb")
        .with_client(
            "obs-client",
            Some(ClientProof::Secret(Secret::new(CLIENT_SECRET))),
        )
        .pinned_to(auth.url());
    let mut results = Vec::new();
    for client in [machine, user] {
        let mcp = McpClient::new().expect("client");
        let executor = McpExecutor::new(mcp.clone());
        executor.set_credentials(Some(Arc::new(Fixed(client))));
        let config = HostConfig::from_value(&json!({"tools": [{
            "name": "echo", "description": "echo", "input_schema": {"type": "object"},
            "url": server.url(), "mcp_tool": "echo", "tenants": [TENANT],
        }]}))
        .expect("config");
        let echo = config.get("echo").expect("binding");
        for (i, revoke) in [false, true, false].into_iter().enumerate() {
            if revoke {
                auth.revoke_all();
            }
            let call = ToolCall::new(TENANT, "session-obs", format!("oauth-{i}"), json!({}));
            let lookup = |_: &str| Ok(Secret::new(TOKEN.to_owned()));
            let result = run_call_with(
                echo,
                call,
                &executor,
                &NoProgress,
                &CancellationToken::new(),
                &lookup,
            )
            .await;
            results.push(serde_json::to_value(&result).expect("JSON"));
        }
        // A refusing token endpoint echoes the request back in its description.
        assert!(mcp.flush(std::time::Duration::from_secs(10)).await);
    }
    auth.configure(|c| c.refuse_tokens = true);
    auth.revoke_all();
    let mcp = McpClient::new().expect("client");
    let executor = McpExecutor::new(mcp.clone());
    let refused = OAuthClient::pinned(
        auth.url(),
        "obs-client",
        ClientProof::Secret(Secret::new(CLIENT_SECRET)),
    );
    executor.set_credentials(Some(Arc::new(Fixed(refused))));
    let config = HostConfig::from_value(&json!({"tools": [{
        "name": "echo", "description": "echo", "input_schema": {"type": "object"},
        "url": server.url(), "mcp_tool": "echo", "tenants": [TENANT],
    }]}))
    .expect("config");
    let call = ToolCall::new(TENANT, "session-obs", "oauth-refused", json!({}));
    let lookup = |_: &str| Ok(Secret::new(TOKEN.to_owned()));
    let result = run_call_with(
        config.get("echo").expect("binding"),
        call,
        &executor,
        &NoProgress,
        &CancellationToken::new(),
        &lookup,
    )
    .await;
    results.push(serde_json::to_value(&result).expect("JSON"));
    assert_eq!(
        results.iter().filter(|r| r["is_error"] == false).count(),
        6,
        "{results:?}"
    );
    // Every secret the exchanges carried, as the authorization server saw them.
    let mut secrets = vec![CLIENT_SECRET.to_owned()];
    secrets.extend(auth.issued());
    for seen in auth.token_requests() {
        for field in ["code", "code_verifier", "refresh_token", "client_secret"] {
            secrets.extend(seen.form(field));
        }
        secrets.extend(
            seen.authorization
                .map(|a| a.trim_start_matches("Basic ").to_owned()),
        );
    }
    assert!(
        secrets.iter().any(|s| s.starts_with("code-")),
        "the code grant ran"
    );
    assert!(
        secrets.iter().any(|s| s.starts_with("refresh-")),
        "a refresh ran"
    );
    let printed = capture.printed();
    assert!(printed.contains("tools/call"), "trace output was captured");
    let all = format!("{printed}{results:?}");
    for secret in &secrets {
        assert!(!all.contains(secret.as_str()), "{secret:?} leaked");
    }
    authorization_is_visible(capture, &auth.url());
}

/// Authorization in spans, events and exchange lines: a span per token request naming
/// the server, the issuer and the grant; an event with its outcome; the metadata fetches;
/// and the bytes of every fetched answer counted.
fn authorization_is_visible(capture: &Capture, issuer: &str) {
    let tokens = capture.seen.spans_named("auth_token");
    for grant in ["client_credentials", "authorization_code", "refresh_token"] {
        assert!(
            tokens
                .iter()
                .any(|t| t.get("grant").map(String::as_str) == Some(grant)),
            "a {grant} request was seen: {tokens:?}"
        );
    }
    assert!(
        tokens
            .iter()
            .all(|t| t.get("issuer").map(String::as_str) == Some(issuer)),
        "{tokens:?}"
    );
    let events = capture.seen.events_with("brain::auth");
    let outcomes: Vec<&str> = events
        .iter()
        .filter(|e| e.get("message").map(String::as_str) == Some("token request"))
        .filter_map(|e| e.get("outcome").map(String::as_str))
        .collect();
    assert!(
        outcomes.contains(&"ok") && outcomes.contains(&"refused"),
        "{outcomes:?}"
    );
    // The call whose client was refused (`invalid_client`) says the credentials are to fix.
    assert!(
        events.iter().any(|e| {
            e.get("message").map(String::as_str) == Some("no token")
                && e.get("fault").map(String::as_str) == Some("config")
        }),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.get("message").map(String::as_str) == Some("metadata")
                && e.get("outcome").map(String::as_str) == Some("ok")),
        "{events:?}"
    );
    let fetched: Vec<_> = capture
        .seen
        .events_with("brain::exchange")
        .into_iter()
        .filter(|e| e.get("http_method").map(String::as_str) == Some("GET"))
        .collect();
    assert!(!fetched.is_empty());
    assert!(
        fetched
            .iter()
            .filter(|e| e.get("status").map(String::as_str) == Some("200"))
            .all(|e| e.get("bytes").is_some_and(|b| b != "0")),
        "the bytes of a fetched document are counted: {fetched:?}"
    );
}
