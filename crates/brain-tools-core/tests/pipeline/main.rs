//! The call pipeline with a recording executor: order of the rules, deadlines, cancel
//! (`order.rs`), and the output limit and output-schema check (`output.rs`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)] // test code: a failed expectation is a failed test

mod order;
mod output;
mod support;
