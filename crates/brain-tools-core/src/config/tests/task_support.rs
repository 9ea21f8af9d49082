//! `task_support`: written by discovery for tools that run as tasks, read back as it was.

use serde_json::json;

use super::*;
use crate::{McpEndpoint, TaskSupport};

#[test]
fn task_support_is_read_written_back_and_checked() {
    for (written, read) in [
        (None, TaskSupport::Forbidden),
        (Some("optional"), TaskSupport::Optional),
        (Some("required"), TaskSupport::Required),
    ] {
        let value = match written {
            Some(text) => with(mcp("x"), "task_support", json!(text)),
            None => mcp("x"),
        };
        let binding = Binding::from_value(&value).expect("loads");
        assert_eq!(binding.mcp().map(McpEndpoint::task_support), Some(read));
        let form = binding.to_value();
        assert_eq!(form.get("task_support").and_then(Value::as_str), written);
        let again = Binding::from_value(&form).expect("what is written loads");
        assert_eq!(again.mcp().map(McpEndpoint::task_support), Some(read));
    }
    for bad in [
        json!("forbidden"),
        json!("Required"),
        json!(true),
        json!(null),
    ] {
        assert_eq!(
            one_error(with(mcp("x"), "task_support", bad.clone())),
            "tools[1].task_support: must be \"optional\" or \"required\"",
            "{bad}"
        );
    }
    assert_eq!(
        errors_of(vec![with(
            without(mcp("x"), "mcp_tool"),
            "task_support",
            json!("required")
        )]),
        ["tools[0].task_support: only allowed on an MCP binding (mcp_tool is set)"]
    );
}
