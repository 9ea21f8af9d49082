//! `max_in_flight`: one limit per server, shared by its bindings.

use serde_json::json;

use super::{errors_of, mcp, one_error, with, without};
use crate::HostConfig;

#[test]
fn a_server_has_one_in_flight_limit_shared_by_its_bindings() {
    let limited = with(mcp("a"), "max_in_flight", json!(4));
    let config = HostConfig::from_value(&json!({"tools": [limited, mcp("b")]})).unwrap();
    // Given once, it holds for every binding of the server, and writes back.
    assert_eq!(config.get("a").unwrap().max_in_flight(), Some(4));
    assert_eq!(config.get("b").unwrap().max_in_flight(), Some(4));
    assert_eq!(config.get("a").unwrap().to_value()["max_in_flight"], 4);
    let other = with(
        with(mcp("c"), "url", json!("https://other.example/mcp")),
        "max_in_flight",
        json!(9),
    );
    let config = HostConfig::from_value(
        &json!({"tools": [with(mcp("a"), "max_in_flight", json!(4)), other]}),
    )
    .unwrap();
    assert_eq!(config.get("c").unwrap().max_in_flight(), Some(9));
    assert_eq!(
        errors_of(vec![
            with(mcp("a"), "max_in_flight", json!(4)),
            with(mcp("b"), "max_in_flight", json!(8))
        ]),
        [
            "tools[1].max_in_flight: differs from tools[0].max_in_flight's 4 for the same server; a server has one limit"
        ]
    );
    assert_eq!(
        one_error(with(mcp("x"), "max_in_flight", json!(0))),
        "tools[1].max_in_flight: must be between 1 and 10000"
    );
    let http = with(without(mcp("x"), "mcp_tool"), "max_in_flight", json!(2));
    assert_eq!(
        one_error(http),
        "tools[1].max_in_flight: only allowed on an MCP binding (mcp_tool is set)"
    );
}
