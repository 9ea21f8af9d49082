//! The JSON-RPC 2.0 and Model Context Protocol message model used by Brain.
//!
//! This crate performs no IO: it never opens sockets, spawns tasks or reads the clock.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod jsonrpc;
