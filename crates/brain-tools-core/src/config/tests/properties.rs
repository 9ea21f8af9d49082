//! Property tests of the load-time rules: names, limits, variables, schemes, typos.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn valid_name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,64}"
}

proptest! {
    #[test]
    fn any_valid_name_loads(name in valid_name()) {
        let config = HostConfig::from_value(&json!({"tools": [mcp(&name)]}));
        prop_assert!(config.is_ok());
    }

    #[test]
    fn names_with_other_characters_are_refused(
        prefix in "[a-z]{0,5}", bad in "[^A-Za-z0-9_-]", suffix in "[a-z]{0,5}"
    ) {
        let name = format!("{prefix}{bad}{suffix}");
        prop_assert_eq!(
            one_error(mcp(&name)),
            "tools[1].name: must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"
        );
    }

    #[test]
    fn timeouts_in_range_load_and_others_do_not(t in -100_000i64..200_000) {
        let result = Binding::from_value(&with(mcp("x"), "timeout_seconds", json!(t)));
        if (1..=86_400).contains(&t) {
            prop_assert_eq!(result.unwrap().timeout, Duration::from_secs(t.unsigned_abs()));
        } else {
            prop_assert_eq!(
                result.unwrap_err().to_string(),
                "timeout_seconds: must be between 1 and 86400"
            );
        }
    }

    #[test]
    fn output_limits_in_range_load_and_others_do_not(n in -10i64..(70 * 1024 * 1024)) {
        let result = Binding::from_value(&with(mcp("x"), "max_output_bytes", json!(n)));
        if (1..=67_108_864).contains(&n) {
            prop_assert_eq!(result.unwrap().max_output_bytes as i64, n);
        } else {
            prop_assert_eq!(
                result.unwrap_err().to_string(),
                "max_output_bytes: must be between 1 and 67108864"
            );
        }
    }

    #[test]
    fn env_names_follow_the_shell_rule(var in "[A-Za-z_][A-Za-z0-9_]{0,30}", bad in "[0-9-][A-Za-z0-9_]{0,5}") {
        prop_assert!(Binding::from_value(&with(mcp("x"), "token_env", json!(var))).is_ok());
        prop_assert!(Binding::from_value(&with(mcp("x"), "token_env", json!(bad))).is_err());
    }

    #[test]
    fn non_http_schemes_are_refused(scheme in "[a-z]{1,8}") {
        prop_assume!(scheme != "http" && scheme != "https");
        prop_assert_eq!(
            one_error(with(mcp("x"), "url", json!(format!("{scheme}://example.com/mcp")))),
            "tools[1].url: must be an http or https URL"
        );
    }

    #[test]
    fn one_letter_typos_of_fields_are_suggested(index in 0usize..11, pos in 0usize..20) {
        let field = parse::BINDING_FIELDS[index];
        let mut typo: Vec<char> = field.chars().collect();
        typo.remove(pos % typo.len());
        let typo: String = typo.into_iter().collect();
        prop_assume!(!parse::BINDING_FIELDS.contains(&typo.as_str()));
        let errors = errors_of(vec![with(mcp("x"), &typo, json!(1))]);
        let expected = format!("tools[0].{typo}: unknown field; did you mean \"{field}\"?");
        prop_assert!(errors.contains(&expected), "{:?}", errors);
    }

    #[test]
    fn arbitrary_json_never_panics(text in ".{0,200}") {
        let _ = HostConfig::load(&text);
    }
}
