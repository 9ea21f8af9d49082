//! What the test server records for assertions, and the switches tests use on a live server.

use std::time::Duration;

use brain_tests::server::{Era, ServerConfig, TestServer};
use serde_json::json;

use crate::server_http::{ACCEPT, Conn, JSON, MODERN, Session, modern_call, modern_rpc};

#[test]
fn cancellations_and_connections_are_recorded() {
    let server = TestServer::start(ServerConfig::new(Era::Handshake));
    let mut s = Session::open(server.addr());
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "timeout"}});
    assert_eq!(s.post(&cancel.to_string()).status, 202);
    let _other = Session::open(server.addr());
    let stats = server.stats();
    assert_eq!(stats.cancelled_request_ids(), vec![json!(7)]);
    assert_eq!(stats.connections, 2);
    assert_eq!(stats.received[2].session_id.as_deref(), Some(s.id.as_str()));
}

#[test]
fn counters_count_without_keeping_requests() {
    let server = TestServer::start(ServerConfig {
        keep_requests: false,
        ..ServerConfig::new(Era::Handshake)
    });
    let mut first = Session::open(server.addr());
    let second = Session::open(server.addr());
    let (stats, counted) =
        server.wait_until(Duration::from_secs(10), |_| server.counters().open == 2);
    assert!(counted, "two connections open: {:?}", server.counters());
    assert!(stats.received.is_empty(), "requests are not kept");
    assert!(stats.sessions_opened.is_empty(), "nor session ids");
    let c = server.counters();
    assert_eq!((c.accepted, c.peak_open, c.deletes), (2, 2, 0));
    // Opening a session is an initialize and an initialized notification.
    assert_eq!(c.requests, 4);
    let headers = first.headers();
    let headers: Vec<(String, String)> = headers
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(first.conn.call("DELETE", &headers, None).status, 200);
    assert_eq!(server.counters().deletes, 1);
    drop(second);
    let (_, closed) = server.wait_until(Duration::from_secs(10), |_| server.counters().open == 1);
    assert!(closed, "a closed connection is no longer open");
    server.reset_peak_open();
    assert_eq!(server.counters().peak_open, 1);
}

#[test]
fn a_required_token_is_checked_and_recorded() {
    let config = ServerConfig {
        require_token: Some("t0ken".into()),
        ..ServerConfig::new(Era::Stateless)
    };
    assert!(
        !format!("{config:?}").contains("t0ken"),
        "Debug redacts the token"
    );
    let server = TestServer::start(config);
    let mut conn = Conn::open(server.addr());
    let body = modern_rpc(1, "server/discover", json!({}));
    let mut headers = vec![
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "server/discover"),
    ];
    let refused = conn.call("POST", &headers, Some(&body));
    assert_eq!(refused.status, 401);
    assert!(
        refused
            .header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer"))
    );
    headers.push(("Authorization", "Bearer t0ken"));
    assert_eq!(conn.call("POST", &headers, Some(&body)).status, 200);
    let seen: Vec<Option<String>> = server
        .stats()
        .received
        .iter()
        .map(|r| r.authorization.clone())
        .collect();
    assert_eq!(seen, vec![None, Some("Bearer t0ken".to_owned())]);
}

#[tokio::test]
async fn wait_for_sees_late_effects_and_set_era_switches() {
    let server = TestServer::start(ServerConfig::new(Era::Stateless));
    let addr = server.addr();
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let mut conn = Conn::open(addr);
        modern_call(&mut conn, 1, "server/discover", None, json!({})).status
    });
    let (stats, held) = server
        .wait_for(Duration::from_secs(5), |s| {
            s.count("server/discover") == 1 && s.received[0].status.is_some()
        })
        .await;
    assert!(held, "{stats:?}");
    assert_eq!(stats.received[0].status, Some(200));
    assert_eq!(late.join().expect("the late client"), 200);
    let (_, held) = server
        .wait_for(Duration::from_millis(50), |s| s.count("tools/call") > 0)
        .await;
    assert!(!held, "nothing else arrives");

    server.set_era(Era::Handshake);
    let resp = modern_call(&mut Conn::open(addr), 2, "server/discover", None, json!({}));
    assert_eq!(
        (resp.status, resp.json()["error"]["code"].clone()),
        (400, json!(-32000))
    );
}
