//! What interop runs: each server in each era, every tool with arguments and the outcome
//! Brain should produce (`success`, `tool_error` for the tool's own `isError`, or the
//! `error.kind` of a Brain failure).

use super::peer::Kind;

/// One tool call and its expected outcome.
pub(crate) struct Case {
    pub(crate) tool: &'static str,
    /// The arguments, JSON.
    pub(crate) args: &'static str,
    pub(crate) expect: &'static str,
    /// Why, when the outcome is not plain success.
    pub(crate) note: &'static str,
}

/// How the era of a row is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EraChoice {
    /// Whatever the client learns from the server; the row states what that must be.
    Detected(&'static str),
    /// The 2026 probe is hidden by the proxy, so the client falls back to the handshake.
    ForcedHandshake,
}

impl EraChoice {
    /// The era the row must end up speaking: `handshake` or a 2026 version.
    pub(crate) fn expected(self) -> &'static str {
        match self {
            Self::Detected(era) => era,
            Self::ForcedHandshake => "handshake",
        }
    }

    /// A short label for binding names.
    pub(crate) fn slug(self) -> &'static str {
        match self.expected() {
            "handshake" => "handshake",
            _ => "2026",
        }
    }
}

/// One server in one era, with its cases.
pub(crate) struct Row {
    pub(crate) kind: Kind,
    pub(crate) era: EraChoice,
    pub(crate) cases: Vec<Case>,
}

const fn case(tool: &'static str, args: &'static str, expect: &'static str) -> Case {
    Case {
        tool,
        args,
        expect,
        note: "",
    }
}

const fn noted(
    tool: &'static str,
    args: &'static str,
    expect: &'static str,
    note: &'static str,
) -> Case {
    Case {
        tool,
        args,
        expect,
        note,
    }
}

/// Every tool the reference server lists for a client without capabilities.
fn everything() -> Vec<Case> {
    vec![
        case("echo", r#"{"message":"hello"}"#, "success"),
        case(
            "get-annotated-message",
            r#"{"messageType":"success","includeImage":true}"#,
            "success",
        ),
        case("get-env", "{}", "success"),
        noted(
            "get-resource-links",
            r#"{"count":2}"#,
            "unsupported_content",
            "resource_link blocks",
        ),
        noted(
            "get-resource-reference",
            r#"{"resourceType":"Text","resourceId":1}"#,
            "unsupported_content",
            "an embedded resource block",
        ),
        case(
            "get-structured-content",
            r#"{"location":"Chicago"}"#,
            "success",
        ),
        case("get-sum", r#"{"a":2,"b":3}"#, "success"),
        case("get-tiny-image", "{}", "success"),
        noted(
            "gzip-file-as-resource",
            r#"{"name":"hello.txt.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resourceLink"}"#,
            "unsupported_content",
            "a resource_link block",
        ),
        case("toggle-simulated-logging", "{}", "success"),
        case("toggle-subscriber-updates", "{}", "success"),
        case(
            "trigger-long-running-operation",
            r#"{"duration":1,"steps":2}"#,
            "success",
        ),
        noted(
            "simulate-research-query",
            r#"{"topic":"mcp"}"#,
            "success",
            "a task (2025-11-25): tasks/get polled, tasks/result fetched",
        ),
    ]
}

fn python(handshake: bool) -> Vec<Case> {
    let mut cases = vec![
        case("echo", r#"{"text":"hello"}"#, "success"),
        case("add", r#"{"a":2,"b":3}"#, "success"),
        case("progress", r#"{"steps":2}"#, "success"),
        if handshake {
            noted(
                "ask",
                r#"{"question":"go on?"}"#,
                "user_input_required",
                "elicitation/create on the stream",
            )
        } else {
            noted(
                "ask",
                r#"{"question":"go on?"}"#,
                "rpc_error",
                "-32600: no back-channel for elicitation in the 2026 era",
            )
        },
        noted(
            "confirm",
            r#"{"question":"go on?"}"#,
            "rpc_error",
            "-32021: Brain declares no elicitation capability",
        ),
        noted("fail", "{}", "tool_error", "isError"),
        case("image", "{}", "success"),
    ];
    for filler in FILLERS {
        cases.push(case(filler, "{}", "success"));
    }
    cases
}

const FILLERS: [&str; 8] = [
    "filler-01",
    "filler-02",
    "filler-03",
    "filler-04",
    "filler-05",
    "filler-06",
    "filler-07",
    "filler-08",
];

fn rmcp() -> Vec<Case> {
    vec![
        case("echo", r#"{"text":"hello"}"#, "success"),
        case("add", r#"{"a":2,"b":3}"#, "success"),
        case("progress", r#"{"steps":2}"#, "success"),
        noted("fail", "{}", "tool_error", "isError"),
    ]
}

/// Every row, in report order.
pub(crate) fn rows() -> Vec<Row> {
    vec![
        Row {
            kind: Kind::Everything,
            era: EraChoice::Detected("handshake"),
            cases: everything(),
        },
        Row {
            kind: Kind::Python,
            era: EraChoice::Detected("2026-07-28"),
            cases: python(false),
        },
        Row {
            kind: Kind::Python,
            era: EraChoice::ForcedHandshake,
            cases: python(true),
        },
        Row {
            kind: Kind::Rmcp,
            era: EraChoice::Detected("2026-07-28"),
            cases: rmcp(),
        },
        Row {
            kind: Kind::Rmcp,
            era: EraChoice::ForcedHandshake,
            cases: rmcp(),
        },
    ]
}
