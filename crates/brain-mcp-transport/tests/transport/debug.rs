//! No request or answer type prints a secret through `Debug`: not the path or query of
//! its URL, not its body, not a session id, not a bearer token.

use brain_mcp_proto::client::{Expect, Header};
use brain_mcp_transport::{BearerToken, FetchRequest, PostRequest};
use bytes::Bytes;
use std::time::Duration;

const PLANTED: &str = "PLANTED-dbg-7e1";

#[test]
fn requests_show_no_planted_value() {
    let url = format!("https://mcp.example/path-{PLANTED}?key={PLANTED}")
        .parse()
        .unwrap();
    let mut post = PostRequest::new(
        url,
        Bytes::from(format!("{{\"secret\":\"{PLANTED}\"}}")),
        Expect::Accepted,
    );
    post.headers = vec![
        Header::new("mcp-session-id", PLANTED),
        Header::new("last-event-id", PLANTED),
        Header::new("mcp-protocol-version", "2025-11-25"),
    ];
    post.bearer = Some(BearerToken::new(PLANTED));
    let shown = format!("{post:?}");
    assert!(!shown.contains(PLANTED), "{shown}");
    assert!(
        shown.contains("https://mcp.example") && shown.contains("2025-11-25"),
        "{shown}"
    );

    let url = format!("https://as.example/token?code={PLANTED}")
        .parse()
        .unwrap();
    let mut fetch = FetchRequest::post(
        url,
        "application/x-www-form-urlencoded",
        Bytes::from(format!("client_secret={PLANTED}&refresh_token={PLANTED}")),
        Duration::from_secs(1),
    );
    fetch.headers = vec![Header::sensitive(
        "authorization",
        format!("Basic {PLANTED}"),
    )];
    let shown = format!("{fetch:?}");
    assert!(!shown.contains(PLANTED), "{shown}");
    assert!(shown.contains("https://as.example"), "{shown}");
}
