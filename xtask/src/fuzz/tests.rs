//! Tests of the fuzz command's pure parts: arguments, seeds, SSE framing, log parsing.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::libfuzzer::{Row, Summary, parse};
use super::*;

#[test]
fn arguments_are_seconds_then_targets() {
    let args = |list: &[&str]| parse_args(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(args(&[]), Ok((DEFAULT_SECONDS, TARGETS.to_vec())));
    assert_eq!(args(&["600"]), Ok((600, TARGETS.to_vec())));
    assert_eq!(
        args(&["5", "sse", "decode"]),
        Ok((5, vec!["sse", "decode"]))
    );
    assert!(args(&["0"]).is_err());
    assert!(args(&["ten"]).is_err());
    assert!(args(&["sse"]).is_err());
    assert!(args(&["1", "nope"]).is_err());
}

#[test]
fn the_first_nightly_is_picked_from_rustup_listing() {
    let listing = "stable-x86_64-unknown-linux-gnu (active, default)\n\
        nightly-2026-05-01-x86_64-unknown-linux-gnu\nnightly-x86_64-unknown-linux-gnu\n";
    assert_eq!(
        build::first_nightly(listing).as_deref(),
        Some("nightly-2026-05-01-x86_64-unknown-linux-gnu")
    );
    assert_eq!(
        build::first_nightly("stable-x86_64-unknown-linux-gnu\n"),
        None
    );
}

#[test]
fn every_target_gets_seeds_from_the_real_fixtures() {
    let all = seeds::all(&crate::cmd::project_root(), TARGETS).unwrap();
    let names: Vec<&str> = all.iter().map(|s| s.target).collect();
    assert_eq!(names, TARGETS);
    for seeds in &all {
        assert!(
            seeds.inputs.len() >= 10,
            "{}: {}",
            seeds.target,
            seeds.inputs.len()
        );
    }
    // Every host_config seed is JSON with a tools array, as the loader expects.
    let configs = all.iter().find(|s| s.target == "host_config").unwrap();
    for input in &configs.inputs {
        let doc: Value = serde_json::from_slice(input).unwrap();
        assert!(doc["tools"].is_array(), "{doc}");
    }
    assert!(seeds::all(&crate::cmd::project_root(), &["nope"]).is_err());
}

#[test]
fn sse_seeds_frame_each_message_as_an_event() {
    let stream = sse::stream(&[r#"{"a":1,"b":2}"#], false);
    assert_eq!(
        stream,
        "id: 0\nretry: 3000\ndata:\n\nevent: message\nid: 1\ndata: {\"a\":1,\"b\":2}\n\n"
    );
    let crlf = sse::stream(&[r#"{"a":1,"b":2}"#], true);
    assert_eq!(
        crlf,
        "\u{FEFF}: keep-alive\r\nevent: message\r\nid: 1\r\ndata: {\"a\":1,\r\ndata: \"b\":2}\r\n\r\n"
    );
    assert_eq!(sse::seed(512, 7, "x"), [0x00, 0x02, 7, b'x']);
}

#[test]
fn simple_properties_get_an_annotation() {
    let schema = json!({"type": "object", "properties": {
        "a_b": {"type": "string"}, "n": {"type": "integer"}, "o": {"type": "object"}
    }});
    let annotated = seeds::annotated(&schema);
    assert_eq!(annotated["properties"]["a_b"]["x-mcp-header"], "ab");
    assert_eq!(annotated["properties"]["n"]["x-mcp-header"], "n");
    assert!(annotated["properties"]["o"].get("x-mcp-header").is_none());
}

#[test]
fn json_blocks_are_found_in_markdown() {
    let page = "text\n```json\n{\"tools\": []}\n```\n```text\nno\n```\n```json\n[1]\n```\n";
    assert_eq!(seeds::json_blocks(page), ["{\"tools\": []}\n", "[1]\n"]);
}

#[test]
fn libfuzzer_statistics_are_read_from_the_log() {
    let log = "INFO: Seed: 1\n\
        #256\tINITED cov: 1200 ft: 3400 corp: 150/80Kb exec/s: 0 rss: 60Mb\n\
        #4096\tNEW    cov: 1210 ft: 3500 corp: 151/81Kb lim: 400 exec/s: 2048 rss: 70Mb\n\
        #90000\tDONE   cov: 1300 ft: 4100 corp: 260/120Kb lim: 4096 exec/s: 1500 rss: 90Mb\n\
        Done 90000 runs in 60 second(s)\n\
        stat::number_of_executed_units: 90000\n\
        stat::average_exec_per_sec:     1500\n\
        stat::new_units_added:          110\n\
        stat::peak_rss_mb:              91\n";
    let summary = parse(log);
    assert_eq!(
        summary,
        Summary {
            runs: Some(90000),
            exec_per_sec: Some(1500),
            cov: (Some(1200), Some(1300)),
            features: (Some(3400), Some(4100)),
            corpus: (Some(150), Some(260)),
            corpus_size: Some("120Kb".into()),
            peak_rss_mb: Some(91),
        }
    );
    assert_eq!(
        Row("sse", &summary).to_string(),
        "| sse | 90000 | 1500 | 1200 → 1300 | 3400 → 4100 | 150 → 260 (120Kb) | 91 MB |"
    );
}
