//! Support code for the end-to-end tests: starting real peer servers, and a small
//! in-process MCP server ([`server`]) that speaks both protocol eras and injects faults,
//! an HTTP proxy ([`proxy`]) that tunnels and forwards, and an OAuth authorization
//! server ([`auth`]).

pub mod auth;
pub mod counting;
pub mod peers;
pub mod proxy;
pub mod server;
