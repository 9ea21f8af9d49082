//! `headers`: extra headers per binding, every rule with its exact message.

use serde_json::{Map, json};

use super::*;

#[test]
fn headers_load_round_trip_and_show_no_value() {
    let spec = with(
        mcp("x"),
        "headers",
        json!({"X-Team": "search", "x-request-source": "brain agent", "Cookie": ""}),
    );
    let binding = Binding::from_value(&spec).unwrap();
    let mut names: Vec<&str> = binding.headers().iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["Cookie", "X-Team", "x-request-source"]);
    assert!(
        binding
            .headers()
            .contains(&("x-request-source".to_owned(), "brain agent".to_owned()))
    );
    assert_eq!(binding.to_value(), spec);
    assert_eq!(Binding::from_value(&binding.to_value()).unwrap(), binding);
    let shown = format!("{binding:?}");
    assert!(
        shown.contains("X-Team") && !shown.contains("brain agent"),
        "{shown}"
    );
    // None at all: the field is left out of the config form.
    let plain = Binding::from_value(&mcp("y")).unwrap();
    assert!(plain.headers().is_empty());
    assert!(plain.to_value().get("headers").is_none());
    // HTTP tool bindings may have them too.
    let http = json!({
        "name": "weather", "description": "", "input_schema": {"type": "object"},
        "url": "http://weather.internal/v1", "tenants": ["a"], "headers": {"X-Key-Id": "7"}
    });
    assert_eq!(Binding::from_value(&http).unwrap().headers().len(), 1);
}

#[test]
fn refused_headers_have_exact_messages() {
    let cases = [
        (
            json!([]),
            "tools[1].headers: must be an object of header names and string values",
        ),
        (
            json!({"X Team": "a"}),
            "tools[1].headers[\"X Team\"]: is not a valid header name: use letters, digits and !#$%&'*+-.^_`|~",
        ),
        (
            json!({"X-Team": 7}),
            "tools[1].headers[\"X-Team\"]: must be a string",
        ),
        (
            json!({"X-Team": "a\r\nHost: evil"}),
            "tools[1].headers[\"X-Team\"]: must be visible ASCII characters and spaces (no line breaks or other control characters)",
        ),
        (
            json!({"X-Team": "é"}),
            "tools[1].headers[\"X-Team\"]: must be visible ASCII characters and spaces (no line breaks or other control characters)",
        ),
        (
            json!({"X-Team": "a "}),
            "tools[1].headers[\"X-Team\"]: must not start or end with a space",
        ),
        (
            json!({"Authorization": "Bearer s3cret"}),
            "tools[1].headers.Authorization: is set by the client from token_env; a secret belongs there",
        ),
        (
            json!({"Proxy-Authorization": "Basic s3cret"}),
            "tools[1].headers[\"Proxy-Authorization\"]: is for a proxy, which the client's proxy setting configures",
        ),
        (
            json!({"X-Team": "a", "x-team": "b"}),
            "tools[1].headers[\"x-team\"]: duplicate header; \"X-Team\" is the same name (header names ignore case)",
        ),
    ];
    for (headers, expected) in cases {
        let error = one_error(with(mcp("bad"), "headers", headers.clone()));
        assert_eq!(error, expected, "{headers}");
        assert!(!error.contains("s3cret"));
    }
    let http_owned = [
        "Host",
        "content-type",
        "Content-Length",
        "ACCEPT",
        "Connection",
        "Transfer-Encoding",
        "Upgrade",
    ];
    for name in http_owned {
        let error = one_error(with(mcp("bad"), "headers", json!({ name: "x" })));
        assert!(
            error.ends_with(": is set by the HTTP client and cannot be given"),
            "{error}"
        );
    }
    let mcp_owned = [
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Mcp-Method",
        "Mcp-Name",
        "mcp-param-region",
        "Last-Event-ID",
    ];
    for name in mcp_owned {
        let error = one_error(with(mcp("bad"), "headers", json!({ name: "x" })));
        assert!(
            error.ends_with(": is set by the MCP client and cannot be given"),
            "{error}"
        );
    }
}

#[test]
fn header_limits() {
    let many: Map<String, Value> = (0..33).map(|i| (format!("X-H{i}"), json!("v"))).collect();
    assert_eq!(
        one_error(with(mcp("bad"), "headers", json!(many))),
        "tools[1].headers: at most 32 headers are allowed"
    );
    let just: Map<String, Value> = (0..32).map(|i| (format!("X-H{i}"), json!("v"))).collect();
    assert!(Binding::from_value(&with(mcp("ok"), "headers", json!(just))).is_ok());
    let big = json!({"X-Big": "v".repeat(8192 - 5 + 1)});
    assert_eq!(
        one_error(with(mcp("bad"), "headers", big)),
        "tools[1].headers: header names and values together must be at most 8192 bytes"
    );
    let fits = json!({"X-Big": "v".repeat(8192 - 5)});
    assert!(Binding::from_value(&with(mcp("ok"), "headers", fits)).is_ok());
}
