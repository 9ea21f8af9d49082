//! The soak's mix of calls: what each one asks of which server, and what it must end as.

use serde_json::{Value, json};

/// How a scenario's call is ended, besides its own outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Runs to its outcome.
    Natural,
    /// The cancellation token fires after this many milliseconds.
    Cancel(u64),
    /// The caller drops the call's future after this many milliseconds.
    Drop(u64),
}

/// One kind of call in the mix.
#[derive(Debug)]
pub(crate) struct Scenario {
    /// Shown in the report.
    pub(crate) name: String,
    /// Which server (a key of the plan's targets).
    pub(crate) target: &'static str,
    /// The remote tool.
    pub(crate) tool: &'static str,
    /// The arguments.
    pub(crate) args: Value,
    /// The binding's `timeout_seconds`.
    pub(crate) timeout_seconds: u64,
    /// The binding's `max_output_bytes`.
    pub(crate) max_output_bytes: u64,
    /// How the call ends.
    pub(crate) ending: Ending,
    /// The error kind it must end with (`ok` for a success, `dropped` for a dropped call).
    pub(crate) expect: &'static str,
}

fn scenario(
    name: impl Into<String>,
    target: &'static str,
    tool: &'static str,
    args: Value,
) -> Scenario {
    Scenario {
        name: name.into(),
        target,
        tool,
        args,
        timeout_seconds: 30,
        max_output_bytes: 1 << 20,
        ending: Ending::Natural,
        expect: "ok",
    }
}

/// The targets a plan must name: the test server in each era and the real peers.
pub(crate) const TARGETS: &[&str] = &[
    "test-handshake",
    "test-stateless",
    "everything",
    "python",
    "python-handshake",
    "rmcp",
    "rmcp-handshake",
];

/// Whether a target must be forced to the handshake era (a dual-era peer).
pub(crate) fn forced_handshake(target: &str) -> bool {
    target.ends_with("-handshake") && !target.starts_with("test")
}

/// The mix, in the order calls cycle through it.
pub(crate) fn mix() -> Vec<Scenario> {
    let text = || json!({"text": "soak"});
    let mut all = Vec::new();
    for (era, target) in [("h", "test-handshake"), ("s", "test-stateless")] {
        let name = |what: &str| format!("test-{era} {what}");
        all.push(scenario(name("echo"), target, "echo", text()));
        all.push(scenario(
            name("progress"),
            target,
            "progress",
            json!({"steps": 3, "delay_ms": 5}),
        ));
        all.push(Scenario {
            timeout_seconds: 1,
            expect: "timeout",
            ..scenario(name("timeout"), target, "hang", json!({}))
        });
        all.push(Scenario {
            ending: Ending::Cancel(100),
            expect: "cancelled",
            ..scenario(name("cancel"), target, "hang", json!({}))
        });
        all.push(Scenario {
            ending: Ending::Drop(100),
            expect: "dropped",
            ..scenario(name("drop"), target, "hang", json!({}))
        });
        all.push(Scenario {
            expect: "connection_lost",
            ..scenario(name("conn dropped"), target, "drop_mid", json!({}))
        });
        all.push(Scenario {
            expect: "tool_error",
            ..scenario(name("tool error"), target, "fail", json!({}))
        });
        all.push(Scenario {
            max_output_bytes: 64 << 10,
            expect: "output_too_large",
            ..scenario(
                name("too large"),
                target,
                "huge",
                json!({"bytes": 256 << 10}),
            )
        });
    }
    all.push(Scenario {
        expect: "rpc_error",
        ..scenario(
            "test-h unknown tool",
            "test-handshake",
            "no_such_tool",
            text(),
        )
    });
    all.push(Scenario {
        expect: "invalid_arguments",
        ..scenario(
            "test-s bad args",
            "test-stateless",
            "echo",
            json!({"text": 5}),
        )
    });
    all.push(scenario(
        "everything echo",
        "everything",
        "echo",
        json!({"message": "soak"}),
    ));
    all.push(scenario("python echo", "python", "echo", text()));
    all.push(scenario(
        "python-h echo",
        "python-handshake",
        "echo",
        text(),
    ));
    all.push(scenario("rmcp echo", "rmcp", "echo", text()));
    all.push(scenario("rmcp-h echo", "rmcp-handshake", "echo", text()));
    all
}

/// The binding of scenario `s` against `url`, as a host config entry named `name`.
pub(crate) fn binding(s: &Scenario, name: &str, url: &str) -> Value {
    let schema = if s.tool == "echo" && s.target.starts_with("test") {
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    } else {
        json!({"type": "object"})
    };
    json!({
        "name": name,
        "description": &s.name,
        "input_schema": schema,
        "url": url,
        "mcp_tool": s.tool,
        "tenants": ["soak"],
        "timeout_seconds": s.timeout_seconds,
        "max_output_bytes": s.max_output_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_names_a_known_target_and_has_a_unique_name() {
        let all = mix();
        let mut names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(all.iter().all(|s| TARGETS.contains(&s.target)));
        assert!(forced_handshake("python-handshake"));
        assert!(!forced_handshake("test-handshake"));
    }
}
