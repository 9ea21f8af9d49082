//! What the program-level hostile tests share: running a program as an operator does,
//! the output levels, how a server spells a secret, and the checks on what was printed.
#![allow(dead_code)] // each test file that includes this module uses its own part

use std::process::Command;

use proptest::prelude::*;

/// Characters a terminal acts on that a valid JSON reply may carry raw.
pub(crate) const HOSTILE_CHARS: &str = "\u{202e}\u{2028}\u{200b}\u{9b}\u{7f}";

/// How the server writes the secret in a JSON body.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Spelling {
    /// As it is.
    Plain,
    /// `/` as `\/` (PHP's default).
    EscapedSlash,
    /// Every character as `\uXXXX`.
    Unicode,
    /// Every other character as `\uXXXX`.
    Mixed,
}

/// `secret` as a JSON string's contents in `spelling`.
pub(crate) fn spell(secret: &str, spelling: Spelling) -> String {
    secret
        .chars()
        .enumerate()
        .map(|(i, c)| match spelling {
            Spelling::EscapedSlash if c == '/' => "\\/".to_owned(),
            Spelling::Unicode => format!("\\u{:04x}", u32::from(c)),
            Spelling::Mixed if i % 2 == 0 => format!("\\u{:04X}", u32::from(c)),
            _ => c.to_string(),
        })
        .collect()
}

/// What a program printed.
pub(crate) struct Printed {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Printed {
    pub(crate) fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

pub(crate) fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Printed {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    Printed {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The output levels of both programs: `-v`, and `RUST_LOG` at debug and trace.
pub(crate) const LEVELS: &[(&str, Option<&str>)] = &[
    ("-v", None),
    ("", Some("debug")),
    ("", Some("trace")),
    ("-v", Some("trace")),
];

/// A small hash to name temporary files apart.
pub(crate) fn fxhash(a: &str, b: &str) -> u64 {
    a.bytes()
        .chain(b.bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, x| {
            (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// No 8 consecutive characters of `secret` (any ASCII case) appear in `text`.
pub(crate) fn assert_no_piece(secret: &str, text: &str, what: &str) {
    let folded = text.to_ascii_lowercase();
    let chars: Vec<char> = secret.to_ascii_lowercase().chars().collect();
    for window in chars.windows(8.min(chars.len())) {
        let piece: String = window.iter().collect();
        if let Some(at) = folded.find(&piece) {
            let mut from = at.saturating_sub(300);
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            let mut to = (at + 300).min(text.len());
            while !text.is_char_boundary(to) {
                to += 1;
            }
            panic!(
                "{what}: {piece:?} of the secret was printed:\n…{}…",
                &text[from..to]
            );
        }
    }
}

/// Nothing a terminal would act on reaches stderr.
pub(crate) fn assert_terminal_safe(stderr: &str, what: &str) {
    for c in HOSTILE_CHARS.chars() {
        assert!(
            !stderr.contains(c),
            "{what}: {c:?} reached stderr raw:\n{stderr}"
        );
    }
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: a control character reached stderr"
    );
}

/// A secret of 16 to 32 characters, with `/` and `+` so JSON and URL escapes matter.
pub(crate) fn secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9/+_-]{16,32}"
}

pub(crate) fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::Plain),
        Just(Spelling::EscapedSlash),
        Just(Spelling::Unicode),
        Just(Spelling::Mixed),
    ]
}
