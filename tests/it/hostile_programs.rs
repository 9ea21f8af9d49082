//! `mcp-call` and `mcp-tools` against a server whose words are hostile: whatever it sends,
//! each failure is one line on stderr with no control character, the token (here the value
//! of `CARGO_PKG_NAME`, the one variable tests can rely on) is never printed, and stdout
//! stays valid JSON.

use brain_mcp_bind::cmd::{EXIT_FAILED, call, tools};
use brain_tests::server::{Era, RawReply};
use serde_json::{Value, json};

use crate::call_support::TENANT;
use crate::hostile_support::{assert_no_token, hostile};

/// Stands in for an API key: cargo sets it for every test process.
const TOKEN_VAR: &str = "CARGO_PKG_NAME";

fn token() -> String {
    std::env::var(TOKEN_VAR).expect("cargo sets CARGO_PKG_NAME for tests")
}

/// Text built to forge terminal output: an OSC 52 clipboard write, erase-line and carriage
/// return, a fake second line, C1 CSI, bidi override, the token and bulk.
fn forged() -> String {
    format!(
        "boom\u{1b}]52;c;aGVsbG8=\u{7}\u{1b}[2K\rmcp-call: tool.result ok\nfake line\u{9b}31m\u{202e}gnp.exe {} {}",
        token().to_ascii_uppercase(),
        "z".repeat(100_000)
    )
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(
    main: fn(&[String], &mut (dyn std::io::Write + Send), &mut dyn std::io::Write) -> i32,
    args: &[&str],
) -> Run {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = main(&args, &mut out, &mut err);
    Run {
        code,
        stdout: String::from_utf8(out).expect("UTF-8 stdout"),
        stderr: String::from_utf8(err).expect("UTF-8 stderr"),
    }
}

fn mcp_tools(args: &[&str]) -> Run {
    fn main(
        args: &[String],
        out: &mut (dyn std::io::Write + Send),
        err: &mut dyn std::io::Write,
    ) -> i32 {
        tools::main(args, out, err)
    }
    run(main, args)
}

/// Asserts stderr is exactly one line, with no control or bidi character in it.
fn assert_one_safe_line(stderr: &str, what: &str) {
    let body = stderr.strip_suffix('\n').unwrap_or(stderr);
    assert!(!body.is_empty(), "{what}: nothing on stderr");
    assert!(
        !body
            .chars()
            .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
        "{what}: raw control characters on stderr: {body:?}"
    );
    assert!(body.len() < 6_000, "{what}: {} bytes on stderr", body.len());
}

#[test]
fn mcp_call_prints_one_safe_line_and_no_token() {
    for era in [Era::Handshake, Era::Stateless] {
        let text = forged();
        let server = hostile(era, move |seen| {
            (seen.method() == Some("tools/call"))
                .then(|| RawReply::rpc_error(200, &seen.id_json(), -32603, &text, None))
        });
        let config =
            std::env::temp_dir().join(format!("brain-hostile-{}-{era:?}.json", std::process::id()));
        let binding = json!({"tools": [{
            "name": "echo", "description": "echo", "input_schema": {"type": "object"},
            "url": server.url(), "mcp_tool": "echo", "token_env": TOKEN_VAR,
            "tenants": [TENANT], "timeout_seconds": 30,
        }]});
        std::fs::write(&config, binding.to_string()).expect("write the config");
        let path = config.display().to_string();
        let r = run(
            call::main,
            &["-config", &path, "-tool", "echo", "-tenant", TENANT],
        );
        let _ = std::fs::remove_file(&config);
        let what = format!("mcp-call in {era:?}");
        assert_eq!(r.code, EXIT_FAILED, "{what}: {}", r.stderr);
        assert_one_safe_line(&r.stderr, &what);
        assert!(
            r.stderr.starts_with("mcp-call: rpc_error: "),
            "{what}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("\\x1b]52;c;"),
            "escapes are shown: {}",
            r.stderr
        );
        assert_no_token(&token(), &r.stderr, &what);
        assert_no_token(&token(), &r.stdout, &what);
        assert_eq!(r.stdout.lines().count(), 1, "{what}");
        assert!(
            !r.stdout
                .chars()
                .any(|c| ('\u{80}'..='\u{9f}').contains(&c) || c == '\u{202e}')
        );
        let event: Value = serde_json::from_str(&r.stdout).expect("stdout is one JSON line");
        assert_eq!(event["error"]["kind"], "rpc_error");
    }
}

#[test]
fn mcp_tools_prints_one_safe_line_and_no_token() {
    for step in ["initialize", "tools/list"] {
        let text = forged();
        let server = hostile(Era::Handshake, move |seen| {
            (seen.method() == Some(step))
                .then(|| RawReply::rpc_error(500, &seen.id_json(), -32603, &text[..60_000], None))
        });
        let url = server.url();
        let r = mcp_tools(&[
            "-url",
            &url,
            "-tenant",
            TENANT,
            "-tools",
            "echo",
            "-token-env",
            TOKEN_VAR,
        ]);
        let what = format!("mcp-tools, {step} refused");
        assert_eq!(r.code, EXIT_FAILED, "{what}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{what}");
        assert_one_safe_line(&r.stderr, &what);
        assert_no_token(&token(), &r.stderr, &what);
    }
}

#[test]
fn mcp_tools_output_has_no_token_and_no_raw_controls() {
    let description = format!(
        "Reads files.\u{1b}[2K\u{9b}0m {} (\u{202e}txt.exe)",
        token()
    );
    // The schema hides the token behind \u escapes, which a text search would miss.
    let hidden: String = token()
        .chars()
        .map(|c| format!("\\u{:04x}", u32::from(c)))
        .collect();
    let server = hostile(Era::Handshake, move |seen| {
        (seen.method() == Some("tools/list")).then(|| {
            let desc = Value::String(description.clone()).to_string();
            let tools = format!(
                r#"[{{"name":"read","description":{desc},"inputSchema":{{"type":"object","properties":{{"p":{{"type":"string","description":"key {hidden}"}}}}}}}},
                   {{"name":"re.name\u001b[2K","inputSchema":{{"type":"object"}}}}]"#
            );
            RawReply::result(&seen.id_json(), &format!(r#"{{"tools":{tools}}}"#))
        })
    });
    let url = server.url();
    let r = mcp_tools(&[
        "-url",
        &url,
        "-tenant",
        TENANT,
        "-tools",
        "read",
        "-token-env",
        TOKEN_VAR,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_no_token(&token(), &r.stdout, "printed bindings");
    assert!(r.stdout.contains("[redacted]"), "{}", r.stdout);
    assert!(
        !r.stdout
            .chars()
            .any(|c| ('\u{80}'..='\u{9f}').contains(&c) || c == '\u{202e}'),
        "{}",
        r.stdout
    );
    let printed: Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
    let schema = printed[0]["input_schema"].to_string();
    assert!(schema.contains("key [redacted]"), "{schema}");
    assert!(
        printed[0]["description"]
            .as_str()
            .is_some_and(|d| d.contains('\u{1b}')),
        "the value itself is kept, only escaped on output"
    );

    // A remote name with control characters cannot be a binding: the command says which
    // tool, on one safe line.
    let r = mcp_tools(&[
        "-url",
        &url,
        "-tenant",
        TENANT,
        "-tools",
        "re.name\u{1b}[2K",
    ]);
    assert_eq!(r.code, EXIT_FAILED, "{}", r.stderr);
    assert_one_safe_line(&r.stderr, "control characters in a tool name");
    assert!(
        r.stderr
            .contains("mcp_tool: must not contain control characters"),
        "{}",
        r.stderr
    );
}
