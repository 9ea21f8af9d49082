//! Shared pieces of the hostile-server tests: a token the server reflects, the forms it
//! may take, and running one call or one program against a server whose hook answers.

use brain_mcp_bind::Era as ClientEra;
use brain_mcp_proto::version::ProtocolVersion;
use brain_tests::server::{Era, RawReply, Seen, ServerConfig, TestServer};
use serde_json::{Value, json};

use crate::call_support::{Call, Harness, Outcome, TENANT, binding, call_with};

/// The API key the hostile server is given and reflects back.
pub(crate) const TOKEN: &str = "sk-Live/Zq9x+Hostile=42";

/// Every form in which a reflected token must not appear: as sent, lower- and upper-cased
/// (a host name lower-cases it), and percent-encoded (a URL encodes it).
pub(crate) fn token_forms(token: &str) -> Vec<String> {
    let encoded: String = token
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    vec![
        token.to_owned(),
        token.to_ascii_lowercase(),
        token.to_ascii_uppercase(),
        encoded.clone(),
        encoded.to_ascii_lowercase(),
    ]
}

/// Asserts no form of `token` appears in `text` (compared ignoring ASCII case).
pub(crate) fn assert_no_token(token: &str, text: &str, what: &str) {
    let folded = text.to_ascii_lowercase();
    for form in token_forms(token) {
        assert!(
            !folded.contains(&form.to_ascii_lowercase()),
            "{what} shows the token as {form:?}: {}",
            &text[..text.len().min(600)]
        );
    }
}

/// A server of `era` whose hook may answer any request.
pub(crate) fn hostile(
    era: Era,
    hook: impl Fn(&Seen<'_>) -> Option<RawReply> + Send + Sync + 'static,
) -> TestServer {
    TestServer::start(ServerConfig::new(era).hook(hook))
}

/// The client-side era a server era is known to speak (set on the client, skipping the
/// probe, so the hostile answer reaches the step under test).
pub(crate) fn client_era(era: Era) -> ClientEra {
    match era {
        Era::Stateless => ClientEra::Stateless(ProtocolVersion::V2026_07_28),
        _ => ClientEra::Handshake,
    }
}

/// Calls `tool` on `server` once with [`TOKEN`] as the binding's token and `max_output_bytes`
/// of `limit`; the era is set on the client first when `era` is given.
pub(crate) async fn call_with_token(
    server: &TestServer,
    era: Option<Era>,
    tool: &str,
    args: Value,
    limit: u64,
) -> Outcome {
    call_with_this_token(server, era, tool, args, limit, TOKEN).await
}

/// [`call_with_token`] with another token.
pub(crate) async fn call_with_this_token(
    server: &TestServer,
    era: Option<Era>,
    tool: &str,
    args: Value,
    limit: u64,
    token: &str,
) -> Outcome {
    let h = Harness::new();
    let url = server.url();
    if let Some(era) = era {
        h.client.set_era(&url, client_era(era));
    }
    let spec = json!({
        "name": "hostile",
        "description": "a tool on a hostile server",
        "input_schema": {"type": "object"},
        "url": url,
        "mcp_tool": tool,
        "token_env": "HOSTILE_TOKEN",
        "tenants": [TENANT],
        "timeout_seconds": 30,
        "max_output_bytes": limit,
    });
    let call = Call {
        token: Some(token.to_owned()),
        ..Call::new("h-1", args)
    };
    let out = call_with(&h, &binding(spec), call).await;
    h.flush().await;
    out
}

/// Everything a call produced, as the host would print it.
pub(crate) fn printed(out: &Outcome) -> String {
    let mut text = String::new();
    for event in out.progress.iter().chain(std::iter::once(&out.result)) {
        text.push_str(&event.to_string());
        text.push('\n');
    }
    text
}

/// The error kind of a result.
pub(crate) fn kind(out: &Outcome) -> String {
    out.result
        .pointer("/error/kind")
        .and_then(Value::as_str)
        .unwrap_or("(none)")
        .to_owned()
}

/// The error message of a result.
pub(crate) fn message(out: &Outcome) -> String {
    out.result
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Answers every `tools/call` with `result` (raw JSON), as JSON or as one SSE event.
pub(crate) fn answer_calls(result: String, sse: bool) -> impl Fn(&Seen<'_>) -> Option<RawReply> {
    move |seen| {
        (seen.method() == Some("tools/call")).then(|| {
            let message = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
                seen.id_json()
            );
            if sse {
                RawReply::sse(&message)
            } else {
                RawReply::json(200, message)
            }
        })
    }
}
