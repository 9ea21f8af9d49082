//! The service's types work with brain-mcp-bind in the build, and numbers still reach a
//! tool exactly through the text the model wrote.

use brain_mcp_bind::{Arguments, ToolCall, ToolEvent};
use embedder_service::{Amount, Order, Price, Reading};

#[test]
fn tagged_untagged_and_flattened_f64s_deserialize() {
    let reading: Reading = serde_json::from_str(r#"{"kind":"Temperature","celsius":21.5}"#)
        .expect("an internally tagged enum holding an f64");
    assert_eq!(reading, Reading::Temperature { celsius: 21.5 });
    let plain: Amount = serde_json::from_str("2.25").expect("an untagged f64");
    assert_eq!(plain, Amount::Plain(2.25));
    let unit: Amount = serde_json::from_str(r#"{"value":0.5,"unit":"kg"}"#)
        .expect("an untagged variant holding an f64");
    assert_eq!(unit, Amount::WithUnit { value: 0.5, unit: "kg".into() });
    let order: Order = serde_json::from_str(r#"{"id":"o-1","amount":9.99}"#)
        .expect("a flattened f64");
    assert_eq!(order, Order { id: "o-1".into(), price: Price { amount: 9.99 } });
}

#[test]
fn serde_json_parses_numbers_as_the_service_expects() {
    // Without `arbitrary_precision` a 30-digit integer is the nearest f64.
    let value: serde_json::Value =
        serde_json::from_str("123456789012345678901234567890").expect("a number");
    assert!(value.is_f64(), "serde_json's arbitrary_precision is on in this build");
}

#[test]
fn the_models_digits_and_a_tools_digits_are_kept_as_text() {
    let text = r#"{"n":123456789012345678901234567890,"d":0.1000000000000000055511151231257827}"#;
    let call = ToolCall::new("t", "s", "c", Arguments::from_json(text).expect("JSON"));
    assert_eq!(call.arguments.text().map(|raw| raw.get()), Some(text));
    let event = r#"{"type":"tool.result","call_id":"c","is_error":false,"content":[],"structured_content":{"n":1e400}}"#;
    let read: ToolEvent = serde_json::from_str(event).expect("an event with a number past f64");
    assert_eq!(serde_json::to_string(&read).expect("JSON"), event);
}
