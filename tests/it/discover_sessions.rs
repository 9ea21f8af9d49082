//! Discovery against the test server: both eras, pagination to the end, and handshake
//! sessions DELETEd afterwards (also when discovery fails).

use std::time::Duration;

use brain_mcp_bind::discover::{self, Request};
use brain_mcp_bind::{Era as ClientEra, McpClient};
use brain_tests::server::{DEMO_TOOLS, Era, FAULT_TOOLS, ServerConfig, Stats, TestServer};

use crate::discover_support::{Behaviour, TENANT, TinyServer};

const SETTLE: Duration = Duration::from_secs(20);

fn request(url: &str, tools: &[&str]) -> Request {
    Request::new(url, TENANT, tools.iter().map(|t| (*t).to_owned()).collect())
}

fn paged(era: Era, size: usize) -> TestServer {
    TestServer::start(ServerConfig {
        page_size: Some(size),
        ..ServerConfig::new(era)
    })
}

/// Every tool of the test server, last-listed first (so the order of the output is ours).
fn all_tools_reversed() -> Vec<&'static str> {
    DEMO_TOOLS
        .iter()
        .chain(FAULT_TOOLS)
        .rev()
        .copied()
        .collect()
}

/// Asserts one handshake session was opened, used for every page and DELETEd.
fn assert_one_session_closed(stats: &Stats, pages: usize) {
    assert_eq!(stats.sessions_opened.len(), 1, "{stats:?}");
    let sid = &stats.sessions_opened[0];
    let lists: Vec<_> = stats.with_method("tools/list").collect();
    assert_eq!(lists.len(), pages);
    assert!(lists.iter().all(|r| r.session_id.as_ref() == Some(sid)));
    assert_eq!(
        stats.sessions_deleted,
        std::slice::from_ref(sid),
        "the session is DELETEd"
    );
}

async fn discover_all(client: &McpClient, url: &str) -> Vec<String> {
    let wanted = all_tools_reversed();
    let found = discover::discover(client, &request(url, &wanted))
        .await
        .expect("discovery works");
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    let names: Vec<String> = found.bindings.iter().map(|b| b.name.clone()).collect();
    assert_eq!(names, wanted, "every tool, in the order named");
    names
}

#[tokio::test]
async fn handshake_era_reads_every_page_in_one_session_and_deletes_it() {
    let server = paged(Era::Handshake, 4);
    let client = McpClient::new().expect("client");
    discover_all(&client, &server.url()).await;
    assert_eq!(client.era(&server.url()), Some(ClientEra::Handshake));
    assert!(client.flush(SETTLE).await);
    let pages = (DEMO_TOOLS.len() + FAULT_TOOLS.len()).div_ceil(4);
    assert_one_session_closed(&server.stats(), pages);
}

#[tokio::test]
async fn a_forced_handshake_on_a_dual_era_server_deletes_its_session() {
    let server = paged(Era::Both, 7);
    let client = McpClient::new().expect("client");
    client.set_era(&server.url(), ClientEra::Handshake);
    discover_all(&client, &server.url()).await;
    assert!(client.flush(SETTLE).await);
    let stats = server.stats();
    assert_eq!(
        stats.count("server/discover"),
        0,
        "the era was set, not probed"
    );
    assert_one_session_closed(&stats, 3);
}

#[tokio::test]
async fn the_2026_era_is_detected_and_needs_no_session() {
    let server = paged(Era::Both, 5);
    let client = McpClient::new().expect("client");
    discover_all(&client, &server.url()).await;
    assert!(matches!(
        client.era(&server.url()),
        Some(ClientEra::Stateless(_))
    ));
    assert!(client.flush(SETTLE).await);
    let stats = server.stats();
    assert_eq!(stats.count("initialize"), 0);
    assert!(stats.sessions_opened.is_empty() && stats.deletes().is_empty());
    let lists: Vec<_> = stats.with_method("tools/list").collect();
    assert_eq!(lists.len(), 4);
    for r in lists {
        assert_eq!(r.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(r.mcp_method.as_deref(), Some("tools/list"));
        assert!(r.session_id.is_none());
    }
}

#[tokio::test]
async fn a_failed_discovery_still_deletes_its_session() {
    let server = paged(Era::Handshake, 3);
    let client = McpClient::new().expect("client");
    let err = discover::discover(&client, &request(&server.url(), &["echo", "ech0"]))
        .await
        .expect_err("ech0 does not exist");
    assert!(
        err.to_string()
            .contains("\"ech0\" (did you mean \"echo\"?)"),
        "{err}"
    );
    assert!(client.flush(SETTLE).await);
    let pages = (DEMO_TOOLS.len() + FAULT_TOOLS.len()).div_ceil(3);
    assert_one_session_closed(&server.stats(), pages);
}

#[tokio::test]
async fn the_deadline_is_a_request_field() {
    let server = TestServer::start(ServerConfig {
        stall_initialize: true,
        ..ServerConfig::new(Era::Handshake)
    });
    let client = McpClient::new().expect("client");
    let mut req = request(&server.url(), &["echo"]);
    req.deadline = Duration::from_millis(700);
    let started = std::time::Instant::now();
    let err = discover::discover(&client, &req)
        .await
        .expect_err("initialize never answers");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.to_string().contains("discovery took longer than 0.7 s"),
        "{err}"
    );
}

#[tokio::test]
async fn a_version_refusal_makes_the_client_forget_the_era() {
    let tiny = TinyServer::start(Behaviour::ListFails(-32022, "Unsupported protocol version"));
    let client = McpClient::new().expect("client");
    let err = discover::discover(&client, &request(&tiny.url(), &["echo"]))
        .await
        .expect_err("tools/list is refused");
    assert!(
        err.to_string()
            .contains("tools/list (page 1): the server answered with error -32022"),
        "{err}"
    );
    assert_eq!(client.era(&tiny.url()), None, "the stale era is forgotten");
    assert_eq!(tiny.count("server/discover"), 1);
}

/// The 2026 era's usual answer to a stale version is HTTP 400 with -32022: read like the
/// same error in a 200, it makes discovery forget the cached era too.
#[tokio::test]
async fn a_version_refusal_with_http_400_also_makes_the_client_forget_the_era() {
    let server = crate::hostile_support::hostile(Era::Stateless, |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            brain_tests::server::RawReply::rpc_error(
                400,
                &seen.id_json(),
                -32022,
                "Unsupported protocol version",
                Some(r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#),
            )
        })
    });
    let client = McpClient::new().expect("client");
    let err = discover::discover(&client, &request(&server.url(), &["echo"]))
        .await
        .expect_err("tools/list is refused");
    let text = err.to_string();
    assert!(
        text.contains("tools/list (page 1): the server answered with error -32022: Unsupported protocol version (HTTP 400) (data: {"),
        "{text}"
    );
    assert!(
        text.contains("\"supported\":[\"2026-07-28\"]"),
        "data is kept: {text}"
    );
    assert_eq!(
        client.era(&server.url()),
        None,
        "the stale era is forgotten"
    );
}

/// A 2026 server may not send requests on a reply stream: one during a listing ends
/// discovery at once, as it ends a call, instead of running into the deadline.
#[tokio::test]
async fn a_server_request_during_a_2026_listing_fails_at_once() {
    let server = crate::hostile_support::hostile(Era::Stateless, |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            // The request, then the stream stays open with no answer.
            brain_tests::server::RawReply::sse(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)
        })
    });
    let client = McpClient::new().expect("client");
    let started = std::time::Instant::now();
    let err = discover::discover(&client, &request(&server.url(), &["echo"]))
        .await
        .expect_err("the listing breaks the protocol");
    assert!(
        err.to_string().contains("where servers send no requests"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not the deadline"
    );
}
