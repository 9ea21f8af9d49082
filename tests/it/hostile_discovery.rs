//! `mcp-tools` against a server whose tool definitions would not load as Brain bindings:
//! it fails naming each such tool and why, and whenever it exits 0 its output loads as the
//! `tools` of a host config unchanged.

use brain_mcp_bind::cmd::{EXIT_FAILED, EXIT_OK};
use brain_tests::server::{Era, RawReply};
use brain_tools_core::HostConfig;

use crate::call_support::TENANT;
use crate::discover_support::mcp_tools;
use crate::hostile_support::hostile;

/// (remote name, raw tool definition after the name, what the refusal says)
fn hostile_tools() -> Vec<(String, String, &'static str)> {
    let long = "t".repeat(300);
    vec![
        ("no_type".into(), r#""inputSchema":{"properties":{"a":{"type":"string"}}}"#.into(), "must have \"type\": \"object\""),
        ("dup_key".into(), r#""inputSchema":{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"number"}}}"#.into(), "duplicate field"),
        ("remote_ref".into(), r#""inputSchema":{"type":"object","$ref":"https://example.com/schema.json"}"#.into(), "is not a valid JSON Schema"),
        ("bad_pattern".into(), r#""inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"(unclosed"}}}"#.into(), "is not a valid JSON Schema"),
        ("bad_output".into(), r#""inputSchema":{"type":"object"},"outputSchema":{"type":12}"#.into(), "output_schema"),
        (long, r#""inputSchema":{"type":"object"}"#.into(), "mcp_tool: must be at most 256 characters"),
        ("past_f64".into(), r#""inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}"#.into(), "holds a number past the range of an f64"),
    ]
}

fn server(era: Era) -> brain_tests::server::TestServer {
    hostile(era, move |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let mut tools: Vec<String> = hostile_tools()
                .into_iter()
                .map(|(name, rest, _)| format!(r#"{{"name":"{name}",{rest}}}"#))
                .collect();
            tools.push(r#"{"name":"fine","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":123456789012345678901234567890}}}}"#.into());
            let list = format!(
                r#"{{"tools":[{}],"resultType":"complete","ttlMs":0,"cacheScope":"public"}}"#,
                tools.join(",")
            );
            RawReply::result(&seen.id_json(), &list)
        })
    })
}

#[test]
fn each_tool_that_would_not_load_is_named_with_its_reason() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = server(era);
        let url = server.url();
        for (name, _, why) in hostile_tools() {
            let list = format!("fine,{name}");
            let r = mcp_tools(&["-url", &url, "-tenant", TENANT, "-tools", &list]);
            let what = format!("{era:?} {}", &name[..name.len().min(20)]);
            assert_eq!(r.code, EXIT_FAILED, "{what}: {r:?}");
            assert!(r.stdout.is_empty(), "{what}: nothing is printed");
            assert_eq!(r.stderr.lines().count(), 1, "{what}: {r:?}");
            let shown = &name[..name.len().min(150)];
            assert!(
                r.stderr.contains(&format!("tool \"{shown}")),
                "{what}: {r:?}"
            );
            assert!(r.stderr.contains(why), "{what}: {r:?}");
            assert!(!r.stderr.contains("tool \"fine\""), "{what}: {r:?}");
        }
    }
}

#[test]
fn what_is_printed_loads_unchanged_with_every_digit_of_its_numbers() {
    for era in [Era::Handshake, Era::Stateless] {
        let server = server(era);
        let r = mcp_tools(&["-url", &server.url(), "-tenant", TENANT, "-tools", "fine"]);
        assert_eq!(r.code, EXIT_OK, "{r:?}");
        assert!(
            r.stdout
                .contains("\"maximum\":123456789012345678901234567890"),
            "{}",
            r.stdout
        );
        let config = HostConfig::load(&format!("{{\"tools\": {}}}", r.stdout));
        let config = config.expect("the printed bindings load unchanged");
        let binding = config.get("fine").expect("the binding");
        let big: serde_json::Value = serde_json::from_str(r#"{"n":1.3e29}"#).expect("json");
        assert!(
            binding.validate_arguments(&big).is_err(),
            "1.3e29 is over the maximum"
        );
        let small: serde_json::Value = serde_json::from_str(r#"{"n":1.2e29}"#).expect("json");
        assert!(binding.validate_arguments(&small).is_ok());
    }
}

/// A server paginating `pages` pages of one tool each, every name `name_bytes` long.
fn paginating(era: Era, pages: usize, name_bytes: usize) -> brain_tests::server::TestServer {
    hostile(era, move |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let page: usize = seen
                .body
                .pointer("/params/cursor")
                .and_then(serde_json::Value::as_str)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let name = format!("{page}{}", "a".repeat(name_bytes));
            let next = if page + 1 < pages {
                format!(r#","nextCursor":"{}""#, page + 1)
            } else {
                String::new()
            };
            let list = format!(
                r#"{{"tools":[{{"name":"{name}","inputSchema":{{"type":"object"}}}}]{next},"resultType":"complete","ttlMs":0,"cacheScope":"public"}}"#
            );
            RawReply::result(&seen.id_json(), &list)
        })
    })
}

#[test]
fn huge_listed_names_cost_neither_time_nor_memory_for_hints() {
    // 20 pages of one 4 MB name each: once 30 s under -timeout 2, in "did you mean".
    for era in [Era::Handshake, Era::Stateless] {
        let server = paginating(era, 20, 4 << 20);
        let started = std::time::Instant::now();
        let wanted = "a".repeat(300);
        let args = ["-url", &server.url(), "-tenant", TENANT, "-timeout", "20"];
        let r = mcp_tools(&[&args[..], &["-tools", &wanted]].concat());
        assert_eq!(r.code, EXIT_FAILED, "{era:?}: {r:?}");
        assert!(r.stderr.contains("the server has no tool named"), "{r:?}");
        assert!(!r.stderr.contains("did you mean"), "{r:?}");
        assert!(r.stderr.len() < 8 << 10, "{}", r.stderr.len());
        assert!(
            started.elapsed() < std::time::Duration::from_secs(15),
            "{era:?}"
        );
    }
}

#[test]
fn the_timeout_bounds_the_whole_command_hints_included() {
    // 2,000 names of 256 characters, each one edit from the 256-character name asked
    // for: hints cost a lot; the command still ends by its -timeout.
    let server = hostile(Era::Stateless, |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let tools: Vec<String> = (0..2_000)
                .map(|i| {
                    format!(
                        r#"{{"name":"{:0>256}","inputSchema":{{"type":"object"}}}}"#,
                        i
                    )
                })
                .collect();
            let list = format!(
                r#"{{"tools":[{}],"resultType":"complete","ttlMs":0,"cacheScope":"public"}}"#,
                tools.join(",")
            );
            RawReply::result(&seen.id_json(), &list)
        })
    });
    let wanted: Vec<String> = (0..100).map(|i| format!("{:1>256}", i)).collect();
    let started = std::time::Instant::now();
    let r = mcp_tools(&[
        "-url",
        &server.url(),
        "-tenant",
        TENANT,
        "-timeout",
        "2",
        "-tools",
        &wanted.join(","),
    ]);
    let took = started.elapsed();
    assert_eq!(r.code, EXIT_FAILED, "{r:?}");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
}

#[test]
fn list_escapes_what_a_server_writes_into_names_and_descriptions() {
    let server = hostile(Era::Stateless, |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let list = r#"{"tools":[{"name":"a\u001b]52;c;ZXZpbA==\u0007","description":"fine\rmcp-tools: forged line\nsecond","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":0,"cacheScope":"public"}"#;
            RawReply::result(&seen.id_json(), list)
        })
    });
    let r = mcp_tools(&["-list", &server.url()]);
    assert_eq!(r.code, EXIT_OK, "{r:?}");
    assert_eq!(r.stdout.lines().count(), 1, "{r:?}");
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stdout.contains('\r'),
        "{r:?}"
    );
    assert!(!r.stdout.contains("second"), "only the first line: {r:?}");
}
