//! Schemas a streamed load keeps as text: shared by their text, with every check a
//! whole-value load makes, and within serde_json's nesting limit.

use serde_json::Value;

use super::*;

#[test]
fn schemas_written_again_are_found_by_their_text_with_every_check_kept() {
    // A streamed load keys schemas by their text: the same text twice is one copy and one
    // validator, and what a text hides (a repeated key, a wrong type, an invalid pattern,
    // a non-object) is reported at every binding that uses it, as a whole load reports it.
    let schema = r#"{"type":"object","properties":{"q":{"type":"string"}}}"#;
    let tool = |name: &str, input: &str, output: &str| {
        format!(
            r#"{{"name":"{name}","description":"d","input_schema":{input},"output_schema":{output},"url":"http://127.0.0.1:1/mcp","mcp_tool":"t","tenants":["x"],"timeout_seconds":5,"max_output_bytes":100}}"#
        )
    };
    let text = format!(
        r#"{{"tools":[{},{}]}}"#,
        tool("a", schema, schema),
        tool("b", schema, schema)
    );
    let config = HostConfig::load(&text).unwrap();
    let (a, b) = (&config.tools()[0], &config.tools()[1]);
    assert!(
        a.input_validator()
            .shares_compiled_form(b.input_validator())
    );
    assert!(std::ptr::eq(a.input_schema(), b.input_schema()));
    assert_eq!(
        a.input_schema(),
        &serde_json::from_str::<Value>(schema).unwrap()
    );

    for bad in [
        r#"{"type":"object","type":"object"}"#,
        r#"{"properties":{}}"#,
        r#"{"type":"string"}"#,
        r#"{"type":"object","properties":{"q":{"type":"string","pattern":"(a"}}}"#,
        r#""not a schema""#,
        r#"[1]"#,
    ] {
        let text = format!(
            r#"{{"tools":[{},{}]}}"#,
            tool("a", bad, schema),
            tool("b", bad, schema)
        );
        let repeats_a_key = bad == r#"{"type":"object","type":"object"}"#;
        let streamed = HostConfig::load(&text)
            .map(|_| ())
            .expect_err(bad)
            .to_string();
        assert!(
            streamed.contains("tools[0].input_schema"),
            "{bad}: {streamed}"
        );
        assert!(
            streamed.contains("tools[1].input_schema"),
            "{bad}: {streamed}"
        );
        if repeats_a_key {
            assert!(streamed.contains("duplicate field"), "{streamed}");
        } else {
            // A whole load reports the same (serde_json would keep the last of a repeated
            // key silently, so that case has no whole-load twin).
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                streamed,
                HostConfig::from_value(&value).unwrap_err().to_string(),
                "{bad}"
            );
        }
    }
}

#[test]
fn a_schema_too_deep_for_a_json_value_is_refused_at_its_path() {
    // serde_json stops at 128 levels counted from the document's root. A schema captured
    // as text is skipped without that limit and parsed again from its own root, so a
    // schema that no JSON value read from the document can hold must still be refused,
    // at its path; written twice, it is refused twice.
    for depth in 118..=128 {
        let mut schema = String::from(r#"{"type":"object"}"#);
        for _ in 0..depth {
            schema = format!(r#"{{"type":"object","not":{schema}}}"#);
        }
        let binding = |name: &str| {
            format!(
                r#"{{"name":"{name}","description":"d","input_schema":{schema},"url":"https://example.com/mcp","mcp_tool":"t","tenants":["x"]}}"#
            )
        };
        let text = format!(r#"{{"tools":[{},{}]}}"#, binding("a"), binding("b"));
        let whole = serde_json::from_str::<Value>(&text);
        let streamed = HostConfig::load(&text);
        match whole {
            Err(e) => {
                let refused = streamed.map(|_| ()).expect_err("too deep for a value");
                for at in ["tools[0].input_schema: ", "tools[1].input_schema: "] {
                    let said = refused.to_string();
                    assert!(
                        said.contains(&format!(
                            "{at}nests arrays and objects deeper than the recursion limit"
                        )),
                        "depth {depth}: serde_json says {e}; the streamed load says {said}"
                    );
                }
            }
            // One level less and both read it: the verdict is the whole-value load's.
            Ok(value) => assert_eq!(
                streamed.map(|_| ()).map_err(|e| e.to_string()),
                HostConfig::from_value(&value)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                "depth {depth}"
            ),
        }
    }
}
