//! Go-style command-line flags: `-name value`, `-name=value`, with `--name` accepted too.
//!
//! The product's commands are documented with single-dash flags, which common Rust parsers
//! do not accept for long names; the grammar is small enough that a direct parser is clearer.

use std::collections::BTreeMap;
use std::fmt;

/// One flag a command accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlagSpec {
    /// The flag's name without dashes, for example `url`.
    pub(crate) name: &'static str,
    /// The placeholder shown in help, for example `URL`; empty for a switch such as `-v`
    /// (given alone, or as `-v=true` / `-v=false`).
    pub(crate) value: &'static str,
    /// What the flag means, shown by `-h`.
    pub(crate) help: &'static str,
}

/// Parsed flags: each given flag's value, by name.
#[derive(Debug, Default)]
pub(crate) struct Flags {
    values: BTreeMap<&'static str, String>,
}

/// What parsing a command line produced.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// The flags to run with.
    Run(Flags),
    /// `-h` or `--help` was given: print the help and exit successfully.
    Help,
}

/// A command line that cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FlagError(pub(crate) String);

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagError {}

impl Flags {
    /// The value of a flag, when it was given.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether a switch is on.
    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.get(name) == Some("true")
    }

    /// The value of a flag that must be given.
    pub(crate) fn require(&self, name: &str) -> Result<&str, FlagError> {
        self.get(name)
            .ok_or_else(|| FlagError(format!("flag -{name} is required")))
    }
}

/// Parses `args` (without the program name) against `specs`.
pub(crate) fn parse(specs: &[FlagSpec], args: &[String]) -> Result<Parsed, FlagError> {
    let mut flags = Flags::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let Some(body) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            return Err(FlagError(format!(
                "unexpected argument {arg:?}: every argument is a flag such as -{}",
                specs.first().map_or("h", |s| s.name)
            )));
        };
        if body == "h" || body == "help" {
            return Ok(Parsed::Help);
        }
        let (name, inline) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (body, None),
        };
        let spec = specs.iter().find(|s| s.name == name).ok_or_else(|| {
            let hint = suggest(name, specs)
                .map(|s| format!("; did you mean -{s}?"))
                .unwrap_or_default();
            FlagError(format!("unknown flag -{name}{hint}"))
        })?;
        let value = match inline {
            Some(value) if spec.value.is_empty() && value != "true" && value != "false" => {
                return Err(FlagError(format!(
                    "flag -{name} is a switch: give it alone, or as -{name}=true or -{name}=false"
                )));
            }
            Some(value) => value,
            None if spec.value.is_empty() => "true".to_owned(),
            None => iter
                .next()
                .cloned()
                .ok_or_else(|| FlagError(format!("flag -{name} needs a value ({})", spec.value)))?,
        };
        if flags.values.insert(spec.name, value).is_some() {
            return Err(FlagError(format!("flag -{name} is given more than once")));
        }
    }
    Ok(Parsed::Run(flags))
}

/// The help text: a usage line and one line per flag.
pub(crate) fn help(usage: &str, about: &str, specs: &[FlagSpec]) -> String {
    let mut out = format!("usage: {usage}\n\n{about}\n\nflags:\n");
    let width = specs
        .iter()
        .map(|s| s.name.len() + s.value.len() + 2)
        .max()
        .unwrap_or(0);
    for spec in specs {
        let left = format!("-{} {}", spec.name, spec.value);
        let left = left.trim_end();
        out.push_str(&format!("  {left:<width$}  {}\n", spec.help));
    }
    out.push_str(&format!("  {:<width$}  show this help\n", "-h"));
    out.push_str("\nFlags may also be written with two dashes (--url) or as -name=value.\n");
    out
}

/// The flag name closest to a misspelt one, when one is close enough to be the likely intent.
fn suggest(name: &str, specs: &[FlagSpec]) -> Option<&'static str> {
    specs
        .iter()
        .map(|s| (crate::text::edit_distance(name, s.name), s.name))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[FlagSpec] = &[
        FlagSpec {
            name: "url",
            value: "URL",
            help: "the endpoint",
        },
        FlagSpec {
            name: "tools",
            value: "LIST",
            help: "names",
        },
    ];

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn run(list: &[&str]) -> Result<Flags, FlagError> {
        match parse(SPECS, &args(list))? {
            Parsed::Run(flags) => Ok(flags),
            Parsed::Help => Err(FlagError("help".into())),
        }
    }

    #[test]
    fn single_and_double_dash_and_inline_values() {
        let flags = run(&["-url", "http://x", "--tools=a,b"]).expect("valid flags");
        assert_eq!(flags.get("url"), Some("http://x"));
        assert_eq!(flags.get("tools"), Some("a,b"));
    }

    #[test]
    fn help_lists_every_flag_aligned() {
        let text = help("cmd -url URL", "About.", SPECS);
        assert!(text.starts_with("usage: cmd -url URL\n\nAbout.\n"));
        assert!(text.contains("\n  -url URL     the endpoint\n"), "{text}");
        assert!(text.contains("\n  -tools LIST  names\n"), "{text}");
        assert!(text.contains("\n  -h           show this help\n"), "{text}");
    }

    #[test]
    fn switches_take_no_value() {
        const WITH_SWITCH: &[FlagSpec] = &[
            FlagSpec {
                name: "v",
                value: "",
                help: "verbose",
            },
            FlagSpec {
                name: "url",
                value: "URL",
                help: "the endpoint",
            },
        ];
        let parsed = |list: &[&str]| match parse(WITH_SWITCH, &args(list)) {
            Ok(Parsed::Run(flags)) => Ok(flags),
            Ok(Parsed::Help) => Err(FlagError("help".into())),
            Err(e) => Err(e),
        };
        let flags = parsed(&["-v", "-url", "x"]).expect("valid");
        assert!(flags.is_set("v"));
        assert_eq!(flags.get("url"), Some("x"));
        assert!(!parsed(&["-v=false"]).expect("valid").is_set("v"));
        assert!(!parsed(&["-url", "x"]).expect("valid").is_set("v"));
        assert!(parsed(&["-v=yes"]).is_err());
        assert!(help("c", "A.", WITH_SWITCH).contains("\n  -v        verbose\n"));
    }

    #[test]
    fn help_wins() {
        assert!(matches!(
            parse(SPECS, &args(&["-url", "u", "-h"])),
            Ok(Parsed::Help)
        ));
        assert!(matches!(parse(SPECS, &args(&["--help"])), Ok(Parsed::Help)));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            run(&["-ulr", "x"]).expect_err("typo"),
            FlagError("unknown flag -ulr; did you mean -url?".into())
        );
        assert_eq!(
            run(&["-url"]).expect_err("missing value"),
            FlagError("flag -url needs a value (URL)".into())
        );
        assert_eq!(
            run(&["-url", "a", "-url", "b"]).expect_err("repeat"),
            FlagError("flag -url is given more than once".into())
        );
        assert!(run(&["stray"]).is_err());
        assert_eq!(
            run(&[])
                .expect("empty is fine")
                .require("url")
                .expect_err("required"),
            FlagError("flag -url is required".into())
        );
    }
}
