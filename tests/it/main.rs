//! End-to-end tests across the workspace.

mod server_demo;
mod server_faults;
mod server_handshake;
mod server_http;
mod server_stateless;
mod server_stats;
