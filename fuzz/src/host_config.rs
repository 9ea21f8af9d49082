//! `brain_tools_core::HostConfig::load`: no text panics, errors print one line each, and
//! a config that loads survives the round trips its API promises.
//!
//! Input layout: the config text (invalid UTF-8 is skipped: `load` takes a `&str`).

use brain_tools_core::{Binding, HostConfig};
use serde_json::{Value, json};

/// Checks the loader's properties on one fuzz input.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match HostConfig::load(text) {
        Ok(config) => loaded(text, &config),
        Err(errors) => {
            // `Display` promises one `path: reason` line per problem.
            let shown = errors.to_string();
            assert_eq!(
                shown.split('\n').count(),
                errors.errors().len(),
                "a problem printed over several lines: {shown:?}"
            );
        }
    }
}

/// What must hold for a config that loaded.
fn loaded(text: &str, config: &HostConfig) {
    // The duplicate-aware parser accepts only what plain JSON parsing accepts.
    let Ok(document) = serde_json::from_str::<Value>(text) else {
        panic!("loaded a config that is not JSON");
    };
    let Ok(again) = HostConfig::from_value(&document) else {
        panic!("load accepted what from_value refuses");
    };
    assert_eq!(again.tools(), config.tools());
    let mut forms = Vec::new();
    for binding in config.tools() {
        let found = config.get(binding.name()).map(|b| b.name());
        assert_eq!(found, Some(binding.name()), "lookup by name");
        // `to_value` is documented to load back into an equal binding.
        let form = binding.to_value();
        match Binding::from_value(&form) {
            Ok(back) => assert_eq!(&back, binding.as_ref()),
            Err(e) => panic!("to_value of a loaded binding does not load: {e}"),
        }
        forms.push(form);
    }
    let printed = json!({ "tools": forms }).to_string();
    match HostConfig::load(&printed) {
        Ok(back) => assert_eq!(back.tools(), config.tools()),
        Err(e) => panic!("the printed config does not load: {e}"),
    }
}
