//! End-to-end tests across the workspace.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test

mod auth_client;
mod auth_delegated;
mod auth_dpop;
mod auth_enterprise;
mod auth_programs;
mod auth_shared;
mod auth_shared_faults;
mod auth_tenants;
mod auth_workload;
mod call_abandon;
mod call_breaker;
mod call_cmd;
mod call_concurrency;
mod call_everything;
mod call_faults;
mod call_headers;
mod call_limits;
mod call_pool;
mod call_probe;
mod call_protocol;
mod call_proxy;
mod call_python;
mod call_refused;
mod call_rmcp;
mod call_stall;
mod call_support;
mod client_stats;
mod discover_failures;
mod discover_peers;
mod discover_sessions;
mod discover_support;
mod host_examples;
mod host_facade;
mod host_oauth;
mod host_reload;
mod hostile_data;
mod hostile_discovery;
mod hostile_programs;
mod hostile_review;
mod hostile_secrets;
mod hostile_support;
mod hostile_tasks;
mod observability;
mod redteam2_http;
mod redteam2_programs;
mod redteam2_stdio;
mod responder;
mod server_demo;
mod server_faults;
mod server_handshake;
mod server_http;
mod server_stateless;
mod server_stats;
mod stdio_faults;
mod stdio_latency;
mod stdio_peers;
mod stdio_python;
mod stdio_support;
mod stdio_tree;
mod task_everything;
mod task_input;
mod trust_secrets;
